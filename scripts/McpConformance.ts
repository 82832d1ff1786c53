/**
 * The public MCP conformance suite (scripts/ConformanceSuite.ts, under Node 22)
 * against a real `engram serve` on the embedded profile, one scenario at a time.
 *
 * The suite's client sends no credentials (it has no option for them) and
 * Engram's `/mcp` requires one, so the suite talks to a loopback pass-through
 * that adds `Authorization: Bearer <key>` and forwards everything else, Host
 * and Origin included, untouched: Engram sees the suite's own headers.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { ensureSuite, type Log, NODE_VERSION, run, SUITE_PACKAGE, SUITE_VERSION, type Suite, type Unavailable } from "./ConformanceSuite.ts"

export { ensureSuite, platformProblem, type Suite, type Unavailable } from "./ConformanceSuite.ts"

/**
 * The server scenarios that apply to Engram, a stateless server with tools of its own and
 * no other capability. `tools-call-error` calls a tool that does not exist (the suite's
 * `test_error_handling`) and wants the failure back as a tool result with `isError` and a
 * message, which is how Engram answers any refused call. The suite's other scenarios need
 * its reference tools (`tools-call-*` but `-error`, `json-schema-2020-12`, `elicitation-*`,
 * `server-sse-polling`), capabilities Engram does not declare (`logging-set-level`,
 * `completion-complete`, `resources-*`, `prompts-*`) or a session
 * (`server-sse-multiple-streams`). `tools-call-simple-text` would pass too, but only
 * because the unknown-tool error is text: it proves nothing here.
 */
export const SCENARIOS = ["server-initialize", "ping", "tools-list", "tools-call-error", "dns-rebinding-protection"] as const

const ENGRAM = join(import.meta.dirname, "..", "bin", "engram.mjs")

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (address !== null && typeof address === "object" ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/** Variables that would move the node off the embedded profile, the built-in plans or the defaults. */
const PROFILE_VARIABLES = [
  "DATABASE_URL",
  "REDIS_URL",
  "PORT",
  "HOST",
  "DATA_DIR",
  "PUBLIC_URL",
  "MCP_ALLOWED_ORIGINS",
  "RUNNER_HOST",
  "RUNNER_PORT",
  "LOG_FORMAT",
  "LOG_LEVEL",
  "PLANS_CONFIG"
]

const Signup = Schema.parseJson(Schema.Struct({ session_token: Schema.String }))
const CreatedKey = Schema.parseJson(Schema.Struct({ raw_key: Schema.String }))

const postJson = async (url: string, body: unknown, token?: string) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== 201) throw new Error(`POST ${url}: ${response.status} ${text}`)
  return text
}

interface Engram {
  readonly url: string
  /** An API key of a fresh account. */
  readonly key: string
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/** `engram serve` on the embedded profile, a free loopback port and a fresh data directory; an account and an API key on it. */
const startEngram = async (serverEnv: Record<string, string>): Promise<Engram> => {
  const dataDir = mkdtempSync(join(tmpdir(), "engram-conformance-"))
  const port = await freePort()
  const env: Record<string, string | undefined> = { ...process.env }
  for (const name of PROFILE_VARIABLES) delete env[name]
  const child: ChildProcess = spawn(process.execPath, [ENGRAM, "serve"], {
    env: {
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warning",
      // Word vectors are compacted once per machine; share the copy the tests or benches made.
      MODELS_DIR: process.env.ENGRAM_TEST_MODELS_DIR ?? process.env.MODELS_DIR ?? join(tmpdir(), "engram-models"),
      ...serverEnv
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()))
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit")
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      await exited
      clearTimeout(timer)
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
  const url = `http://127.0.0.1:${port}`
  try {
    const deadline = Date.now() + 120_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`engram serve exited (${child.exitCode}) before answering:\n${output}`)
      if (Date.now() > deadline) throw new Error(`engram serve did not answer /health within 120 s:\n${output}`)
      const healthy = await fetch(`${url}/health`).then((r) => r.ok, () => false)
      if (healthy) break
      await new Promise((r) => setTimeout(r, 200))
    }
    const email = `conformance-${Date.now()}@example.test`
    const signup = Schema.decodeUnknownSync(Signup)(
      await postJson(`${url}/auth/signup`, { email, password: "conformance password", org_name: "Conformance" })
    )
    const key = Schema.decodeUnknownSync(CreatedKey)(
      await postJson(`${url}/v1/api-keys`, { name: "mcp-conformance", env: "test" }, signup.session_token)
    )
    return { url, key: key.raw_key, output: () => output, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

const HOP_HEADERS = new Set(["connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer"])

const withoutHopHeaders = (headers: IncomingHttpHeaders) => {
  const kept: IncomingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) if (!HOP_HEADERS.has(name)) kept[name] = value
  return kept
}

interface Proxy {
  readonly url: string
  /** Requests forwarded so far. */
  readonly forwarded: () => number
  readonly close: () => Promise<void>
}

/**
 * A loopback HTTP server that forwards every request to `target` (a loopback URL) with
 * `Authorization: Bearer <key>` added; method, path, body and every other header,
 * Host and Origin included, go through as they came, and so does the answer.
 */
const credentialProxy = async (target: string, key: string): Promise<Proxy> => {
  const upstream = new URL(target)
  let forwarded = 0
  const server = createServer((incoming, outgoing) => {
    forwarded++
    const headers = { ...withoutHopHeaders(incoming.headers), authorization: `Bearer ${key}` }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, withoutHopHeaders(answer.headers))
        answer.pipe(outgoing)
      }
    )
    forward.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "text/plain" })
      outgoing.end(`conformance pass-through: ${error.message}`)
    })
    incoming.pipe(forward)
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the pass-through has no TCP port")
  return {
    url: `http://127.0.0.1:${address.port}`,
    forwarded: () => forwarded,
    close: () => {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}

const Check = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  status: Schema.Literal("SUCCESS", "FAILURE", "WARNING", "INFO", "SKIPPED"),
  errorMessage: Schema.optional(Schema.String)
})
export type Check = Schema.Schema.Type<typeof Check>
const Checks = Schema.parseJson(Schema.Array(Check))

export interface ScenarioResult {
  readonly scenario: string
  /** The suite's exit code for the scenario (0: no failed check). */
  readonly exitCode: number
  /** The checks the suite recorded (its checks.json). */
  readonly checks: ReadonlyArray<Check>
  /** At least one check succeeded and none failed or warned. */
  readonly passed: boolean
}

/** One scenario through the suite's CLI under Node 22; its output is streamed to `log`. */
const runScenario = async (suite: Suite, url: string, scenario: string, outputDir: string, log: Log): Promise<ScenarioResult> => {
  const finished = await run(suite.node, [suite.cli, "server", "--url", url, "--scenario", scenario, "--output-dir", outputDir], {
    cwd: outputDir,
    timeoutMs: 180_000,
    streamed: log
  })
  if (finished.timedOut) log(`\n${scenario}: the suite did not finish within 180 s\n`)
  const resultDir = readdirSync(outputDir).find((name) => name.startsWith(`server-${scenario}-`))
  const checksFile = resultDir === undefined ? undefined : join(outputDir, resultDir, "checks.json")
  const checks = checksFile !== undefined && existsSync(checksFile) ? Schema.decodeUnknownSync(Checks)(readFileSync(checksFile, "utf8")) : []
  const passed = finished.code === 0 && checks.some((c) => c.status === "SUCCESS") &&
    checks.every((c) => c.status !== "FAILURE" && c.status !== "WARNING")
  return { scenario, exitCode: finished.code, checks, passed }
}

export interface Ran {
  readonly _tag: "Ran"
  readonly suiteVersion: string
  readonly nodeVersion: string
  readonly results: ReadonlyArray<ScenarioResult>
  /** Every scenario passed. */
  readonly passed: boolean
}

/**
 * Installs the suite if needed, starts a node (with `serverEnv` added to its environment),
 * runs `scenarios` against its /mcp and stops the node.
 */
export const runConformance = async (
  options: {
    readonly scenarios?: ReadonlyArray<string>
    readonly serverEnv?: Record<string, string>
    readonly log?: Log
  } = {}
): Promise<Ran | Unavailable> => {
  const log = options.log ?? ((text: string) => void process.stdout.write(text))
  const suite = await ensureSuite(log)
  if (suite._tag === "Unavailable") return suite
  const engram = await startEngram(options.serverEnv ?? {})
  const outputDir = mkdtempSync(join(tmpdir(), "mcp-conformance-"))
  try {
    const proxy = await credentialProxy(engram.url, engram.key)
    try {
      log(`engram serve at ${engram.url}; the suite reaches its /mcp through ${proxy.url} (adds the API key)\n`)
      const results: Array<ScenarioResult> = []
      for (const scenario of options.scenarios ?? SCENARIOS) {
        log(`\n=== ${scenario} (${SUITE_PACKAGE}@${SUITE_VERSION}, Node ${NODE_VERSION}) ===\n`)
        results.push(await runScenario(suite, `${proxy.url}/mcp`, scenario, outputDir, log))
      }
      if (proxy.forwarded() === 0) throw new Error("the suite never reached the server")
      return { _tag: "Ran", suiteVersion: SUITE_VERSION, nodeVersion: NODE_VERSION, results, passed: results.every((r) => r.passed) }
    } finally {
      await proxy.close()
    }
  } catch (error) {
    log(`\nengram serve output:\n${engram.output()}\n`)
    throw error
  } finally {
    await engram.stop()
    rmSync(outputDir, { recursive: true, force: true })
  }
}

/** One line per scenario: its verdict and each decisive check. */
export const summary = (ran: Ran) =>
  ran.results.map((r) =>
    `${r.passed ? "PASS" : "FAIL"} ${r.scenario}: ` +
    r.checks.filter((c) => c.status !== "INFO").map((c) => `${c.id}=${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ""}`).join(", ")
  ).join("\n")
