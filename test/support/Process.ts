/** The real `engram` executable as a child process, for start-up and CLI tests. */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

const BIN = join(import.meta.dirname, "..", "..", "bin", "engram.mjs")

/** The webhook secret key every test node uses (the server profile needs one). */
export const TEST_WEBHOOK_KEY = "test-webhook-secret-key-0123456789abcdef"

/** Env without the profile variables of the test run, plus `env`. */
export const ROOMY_PLANS = join(import.meta.dirname, "../fixtures/plans-roomy.json")

const environment = (env: Record<string, string>) => {
  const base = { ...process.env }
  for (
    const name of [
      "DATABASE_URL",
      "REDIS_URL",
      "PORT",
      "DATA_DIR",
      "LOG_FORMAT",
      "LOG_LEVEL",
      "RUNNER_HOST",
      "RUNNER_PORT",
      "WEBHOOK_SECRET_KEY",
      "WEBHOOK_RETRY_SCHEDULE",
      "WEBHOOK_ALLOW_PRIVATE",
      "PLANS_CONFIG",
      "METRICS_PORT"
    ]
  ) {
    delete base[name]
  }
  // Share the word vectors compacted by the global setup instead of compacting them per data dir.
  const models = process.env.ENGRAM_TEST_MODELS_DIR ? { MODELS_DIR: process.env.ENGRAM_TEST_MODELS_DIR } : {}
  // Tests that are not about metering run on a plan they cannot exhaust (a test may name its own file).
  return { ...base, ...models, PLANS_CONFIG: ROOMY_PLANS, ...env }
}

/** Signs a new account up on a running server and makes it a test key: the raw key, for Bearer calls. */
export const signupWithKey = async (url: string, email: string): Promise<string> => {
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body)
    })
    if (response.status !== 201) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
    return (await response.json()) as { readonly session_token: string; readonly raw_key: string }
  }
  const signup = await post("/auth/signup", { email, password: "long password", org_name: email.split("@")[0] })
  return (await post("/v1/api-keys", { name: "k", env: "test" }, signup.session_token)).raw_key
}

export interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runEngram = async (args: ReadonlyArray<string>, env: Record<string, string>, timeoutMs = 60_000) => {
  const child = spawn(process.execPath, [BIN, ...args], { env: environment(env), stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
  const [code] = await once(child, "exit")
  clearTimeout(timer)
  return { code, stdout, stderr } as Finished
}

const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/**
 * A port for a process this test starts later. Not one the kernel hands out
 * (`listen(0)` picks from the ephemeral range, 32768-60999 here, which is
 * also where every outgoing connection's local port comes from, so a port
 * found free there can be taken before the child binds it): ports below that
 * range, in a block of its own for each test worker, each handed out once
 * per worker and checked free when handed out.
 */
const PORT_BLOCK = 1_500
const portBase = 12_000 + (Number(process.env.VITEST_POOL_ID ?? "0") % 12) * PORT_BLOCK
let portOffset = Math.floor(Math.random() * PORT_BLOCK)
export const freePort = async (): Promise<number> => {
  for (let tries = 0; tries < PORT_BLOCK; tries++) {
    const port = portBase + (portOffset++ % PORT_BLOCK)
    if (await canListen(port)) return port
  }
  throw new Error(`no free port in ${portBase}-${portBase + PORT_BLOCK - 1}`)
}

export interface Running {
  readonly child: ChildProcess
  readonly url: string
  readonly output: () => string
  readonly stop: () => Promise<number | null>
}

/** Starts `engram serve` (on `port`, or a free one; in `cwd`, or this one) and waits until /health answers. */
export const startServer = async (
  env: Record<string, string>,
  options: { readonly port?: number; readonly cwd?: string; readonly node?: string } = {}
): Promise<Running> => {
  const port = options.port ?? await freePort()
  const child = spawn(options.node ?? process.execPath, [BIN, "serve"], {
    env: environment({ ...env, PORT: String(port), HOST: "127.0.0.1" }),
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd })
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`engram serve exited early (${child.exitCode}):\n${output}`)
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  return {
    child,
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode
      child.kill("SIGTERM")
      const [code] = await once(child, "exit")
      return code
    }
  }
}

/** Runs `f` with a fresh data directory, removed afterwards. */
export const withDataDir = async <A>(f: (dataDir: string) => Promise<A>): Promise<A> => {
  const dataDir = mkdtempSync(join(tmpdir(), "engram-data-"))
  try {
    return await f(dataDir)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}
