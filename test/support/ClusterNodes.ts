/**
 * Several real `engram serve` processes on this machine forming one cluster
 * over a PostgreSQL database of their own (copied from the run's migrated
 * template) and Redis: distinct PORT and RUNNER_PORT per node, restartable
 * on the same ports.
 */
import { certificate } from "./Receiver.ts"
import { copyTemplate } from "./Databases.ts"
import { freePort, type Running, startServer, TEST_WEBHOOK_KEY } from "./Process.ts"

export const clusterSkipReason = process.env.ENGRAM_TEST_TEMPLATE_DATABASE && process.env.REDIS_URL
  ? undefined
  : "cluster tests need DATABASE_URL and REDIS_URL (several engram serve processes on one PostgreSQL and Redis)"

/** A fresh database for one test's cluster; `drop` removes it. */
export const clusterDatabase = copyTemplate

export interface ClusterNode {
  readonly name: string
  readonly port: number
  readonly runnerPort: number
  readonly url: string
  /** Its metrics (METRICS_PORT). */
  readonly metricsUrl: string
  /** Everything the node's current and earlier processes printed. */
  readonly output: () => string
  /** What the node's current process printed. */
  readonly currentOutput: () => string
  readonly start: () => Promise<void>
  /** SIGTERM, and the exit code once it has exited. */
  readonly stop: () => Promise<number | null>
  /** SIGKILL, no goodbye. */
  readonly kill: () => Promise<void>
  readonly running: () => boolean
}

export const makeNode = async (name: string, env: Record<string, string>): Promise<ClusterNode> => {
  const port = await freePort()
  const runnerPort = await freePort()
  const metricsPort = await freePort()
  let process: Running | undefined
  let earlier = ""
  return {
    name,
    port,
    runnerPort,
    url: `http://127.0.0.1:${port}`,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    output: () => earlier + (process?.output() ?? ""),
    currentOutput: () => process?.output() ?? "",
    running: () => process !== undefined && process.child.exitCode === null,
    start: async () => {
      process = await startServer({
        ...env,
        RUNNER_HOST: "127.0.0.1",
        RUNNER_PORT: String(runnerPort),
        METRICS_PORT: String(metricsPort),
        // Each node's spans say which node made them (when traces are exported).
        OTEL_SERVICE_NAME: `engram-node-${name}`,
        LOG_FORMAT: "json",
        LOG_LEVEL: "debug"
      }, { port })
    },
    stop: async () => {
      const code = await process!.stop()
      earlier += process!.output()
      process = undefined
      return code
    },
    kill: async () => {
      const child = process!.child
      const exited = new Promise((r) => child.once("exit", r))
      child.kill("SIGKILL")
      await exited
      earlier += process!.output()
      process = undefined
    }
  }
}

/** Starts `count` nodes on one database and Redis (with `extra` settings, e.g. a plans file). */
export const startCluster = async (count: number, databaseUrl: string, extra: Record<string, string> = {}) => {
  const env = {
    ...extra,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL!,
    WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
    // Webhook receivers in these tests live on loopback with a self-signed certificate.
    WEBHOOK_ALLOW_PRIVATE: "1",
    NODE_EXTRA_CA_CERTS: certificate().certFile
  }
  const nodes = await Promise.all(Array.from({ length: count }, (_, i) => makeNode(String.fromCharCode(65 + i), env)))
  for (const node of nodes) await node.start()
  return nodes
}

/**
 * Whether a node's current process holds a space's entity now: its debug log
 * (annotated with the space) says it loaded the space's index and has not
 * passivated it since.
 */
export const holds = (node: ClusterNode, spaceId: string) => {
  if (!node.running()) return false
  let held = false
  for (const line of node.currentOutput().split("\n")) {
    if (!line.includes(`"space_id":"${spaceId}"`)) continue
    if (line.includes("space index loaded")) held = true
    else if (line.includes("space passivated")) held = false
  }
  return held
}

/** The nodes holding a space's entity now (one, in a healthy cluster). */
export const holders = (nodes: ReadonlyArray<ClusterNode>, spaceId: string) => nodes.filter((node) => holds(node, spaceId))

/** The node holding a space's entity, if one does. */
export const ownerOf = (nodes: ReadonlyArray<ClusterNode>, spaceId: string) => holders(nodes, spaceId)[0]

/**
 * What each node said that explains a failed test: every warning and error,
 * and its last lines (a node that exited shows why), printed to stderr.
 */
export const reportNodes = (nodes: ReadonlyArray<ClusterNode>) => {
  for (const node of nodes) {
    const lines = node.output().split("\n").filter((line) => line.trim() !== "")
    const loud = lines.filter((line) => /"level":"(WARN|ERROR|FATAL)"|level=(WARN|ERROR|FATAL)|Error|exited/i.test(line))
    console.error([`--- node ${node.name} (${node.running() ? "running" : "not running"}): warnings and errors`, ...loud.slice(-40),
      `--- node ${node.name}: last lines`, ...lines.slice(-15)].map((line) => line.slice(0, 600)).join("\n"))
  }
}
