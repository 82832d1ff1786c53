/** Benchmarks drive a real `engram serve` (embedded default, fresh data dir) over HTTP. */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { bundleIsCurrent } from "../bin/sources.mjs"

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })

/** JSON calls to `url` with the current bearer token (none while it is empty); a 4xx or 5xx throws. */
/**
 * A GET is repeated (up to three times) when its connection fails, as a kept-alive socket closed by the server
 * between two polls of a job does (ECONNRESET); a write is never repeated.
 */
export const jsonCaller = (url: string, token: () => string) => async (method: string, path: string, body?: unknown) => {
  const send = () => fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token() ? { authorization: `Bearer ${token()}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  let response: Response | undefined
  for (let attempt = 1; response === undefined; attempt++) {
    try {
      response = await send()
    } catch (error) {
      if (method !== "GET" || attempt >= 3) throw error
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt))
    }
  }
  const json = await response.json()
  if (response.status >= 400) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

export interface BenchServer {
  readonly url: string
  readonly child: ChildProcess
  /** The bench organization's API key. */
  readonly key: string
  readonly rssMb: () => number
  readonly call: (method: string, path: string, body?: unknown) => Promise<any>
  /** The data directory the node stores in. */
  readonly dataDir: string
  /** SIGTERM, then the same node again on the same data directory and port; resolves once /health answers. */
  readonly restart: () => Promise<void>
  readonly stop: () => Promise<void>
}

/**
 * Benchmarks measure the bundle a user runs: when dist/ is older than the
 * sources (an edit since the last build), the node would run them through tsx
 * and every worker would compile its TypeScript too, so the bundle is rebuilt
 * first (`ENGRAM_FROM_SOURCES=1` measures the sources on purpose).
 */
const ensureBundle = () => {
  const root = join(import.meta.dirname, "..")
  if (process.env.ENGRAM_FROM_SOURCES === "1" || bundleIsCurrent(root)) return
  console.error("bench: dist/ is older than the sources; rebuilding it so that the figures are the bundle's")
  execFileSync(process.execPath, [join(root, "scripts", "build.mjs")], { stdio: ["ignore", "ignore", "inherit"] })
}

/**
 * Starts a node and signs up the bench organization on it, or (with `key`)
 * joins a node to an organization an earlier node signed up (cluster benches).
 * With `dataDir` the node stores there and `stop` leaves it in place; a node
 * started again on it uses the API key the first one saved there.
 */
export const startBenchServer = async (
  env: Record<string, string> = {},
  options: { readonly key?: string; readonly dataDir?: string } = {}
): Promise<BenchServer> => {
  ensureBundle()
  const kept = options.dataDir !== undefined
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "engram-bench-"))
  mkdirSync(dataDir, { recursive: true })
  const keyFile = join(dataDir, "bench-key")
  const port = await freePort()
  // BENCH_NODE_ARGS reaches the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter((a) => a !== "")
  const spawnNode = () => spawn(process.execPath, [...nodeArgs, join(import.meta.dirname, "..", "bin", "engram.mjs"), "serve"], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      MODELS_DIR: process.env.MODELS_DIR ?? join(tmpdir(), "engram-models"),
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warning",
      // Benchmarks measure the service, not a plan's allowance.
      PLANS_CONFIG: join(import.meta.dirname, "bench-plans.json"),
      ...env
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  /** Set while the bench itself stops the node: any other exit is reported, with its code or signal. */
  let stopping = false
  const watched = () => {
    const node = spawnNode()
    node.once("exit", (code, signal) => {
      if (!stopping) console.error(`the node on port ${port} exited on its own: ${signal === null ? `code ${code}` : `signal ${signal}`}`)
    })
    return node
  }
  let child = watched()
  const url = `http://127.0.0.1:${port}`
  const healthy = async () => {
    for (let i = 0; i < 2400; i++) {
      try {
        if ((await fetch(`${url}/health`)).ok) return
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50))
    }
    throw new Error(`the node on ${url} never answered /health`)
  }
  const exited = () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once("exit", () => resolve())))
  await healthy()
  let token = ""
  const call = jsonCaller(url, () => token)
  if (options.key !== undefined) {
    token = options.key
  } else if (kept && existsSync(keyFile)) {
    token = readFileSync(keyFile, "utf8").trim()
  } else {
    const session = await call("POST", "/auth/signup", { email: "bench@example.test", password: "bench password", org_name: "Bench" })
    token = session.session_token
    token = (await call("POST", "/v1/api-keys", { name: "bench", env: "test" })).raw_key
    if (kept) writeFileSync(keyFile, token)
  }
  return {
    url,
    get child() {
      return child
    },
    key: token,
    call,
    dataDir,
    restart: async () => {
      stopping = true
      child.kill("SIGTERM")
      await exited()
      stopping = false
      child = watched()
      await healthy()
    },
    rssMb: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
    },
    stop: async () => {
      stopping = true
      child.kill("SIGTERM")
      await exited()
      if (!kept) rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** The bytes of every file under `dir`. */
export const directoryBytes = (dir: string): number => {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += directoryBytes(path)
    else if (entry.isFile()) total += statSync(path).size
  }
  return total
}

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

export const arg = (name: string, fallback?: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : fallback
}
