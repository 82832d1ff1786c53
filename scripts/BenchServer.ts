/** Benchmarks drive a real `engram serve` (embedded default, fresh data dir) over HTTP. */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

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
  readonly stop: () => Promise<void>
}

/**
 * Starts a node and signs up the bench organization on it, or (with `key`)
 * joins a node to an organization an earlier node signed up (cluster benches).
 */
export const startBenchServer = async (env: Record<string, string> = {}, options: { readonly key?: string } = {}): Promise<BenchServer> => {
  const dataDir = mkdtempSync(join(tmpdir(), "engram-bench-"))
  const port = await freePort()
  // BENCH_NODE_ARGS reaches the server's node, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter((a) => a !== "")
  const child = spawn(process.execPath, [...nodeArgs, join(import.meta.dirname, "..", "bin", "engram.mjs"), "serve"], {
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
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  let token = ""
  const call = jsonCaller(url, () => token)
  if (options.key !== undefined) {
    token = options.key
  } else {
    const session = await call("POST", "/auth/signup", { email: "bench@example.test", password: "bench password", org_name: "Bench" })
    token = session.session_token
    token = (await call("POST", "/v1/api-keys", { name: "bench", env: "test" })).raw_key
  }
  return {
    url,
    child,
    key: token,
    call,
    rssMb: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
    },
    stop: async () => {
      child.kill("SIGTERM")
      await new Promise((r) => child.once("exit", r))
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

export const arg = (name: string, fallback?: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : fallback
}
