/**
 * `npm run bench:cluster -- [--nodes 1,3] [--spaces 12] [--requests 600] [--clients 8] [--json]`
 *
 * Record and retrieve throughput and p95 through a cluster of N `engram serve`
 * nodes (server profile: PostgreSQL at DATABASE_URL, default the local
 * server, in a database of its own; Redis at REDIS_URL), requests spread over
 * the nodes round-robin, so most reach a space whose entity lives on another
 * node. Then the mixed load of one space: 50 records and 20 retrieves sent
 * at once, retrieve p95 against its quiet p95.
 */
import Pg from "pg"
import { arg, type BenchServer, freePort, percentile, startBenchServer } from "./BenchServer.ts"

const nodeCounts = (arg("--nodes", "1,3") ?? "1,3").split(",").map(Number)
const spaces = Number(arg("--spaces", "12"))
const requests = Number(arg("--requests", "600"))
const clients = Number(arg("--clients", "8"))
const asJson = process.argv.includes("--json")
const adminUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"

const NAMES = ["Ava", "Ben", "Caro", "Dev", "Elif", "Farid", "Gina", "Hugo", "Ines", "Jon", "Kemal", "Lena"]
const THINGS = ["a lighthouse", "the old bridge", "a rescue dog", "vintage bicycles", "lentil soup", "the night market", "jazz records", "pottery"]
const PLACES = ["in Lisbon", "near Oslo", "in Quito", "by the lake", "at the festival", "in Kyoto"]
let seed = 7
const pick = <A>(xs: ReadonlyArray<A>) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return xs[seed % xs.length]!
}

const admin = async (statement: string) => {
  const client = new Pg.Client({ connectionString: adminUrl })
  await client.connect()
  await client.query(statement).finally(() => client.end())
}

/** Runs `count` requests from `clients` concurrent callers; answers throughput and latencies. */
const load = async (count: number, request: (i: number) => Promise<void>) => {
  const latencies: Array<number> = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < count) {
      const i = next++
      const t = performance.now()
      await request(i)
      latencies.push(performance.now() - t)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  return { per_s: Number((count / seconds).toFixed(1)), p50_ms: Number(percentile(latencies, 50).toFixed(1)), p95_ms: Number(percentile(latencies, 95).toFixed(1)) }
}

const run = async (nodeCount: number) => {
  const database = `engram_bench_${process.pid}_${nodeCount}`
  await admin(`CREATE DATABASE ${database}`)
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  const nodes: Array<BenchServer> = []
  try {
    const env = async () => ({
      DATABASE_URL: url.toString(),
      REDIS_URL: redisUrl,
      RUNNER_HOST: "127.0.0.1",
      RUNNER_PORT: String(await freePort())
    })
    nodes.push(await startBenchServer(await env()))
    for (let i = 1; i < nodeCount; i++) nodes.push(await startBenchServer(await env(), { key: nodes[0]!.key }))
    const via = (i: number) => nodes[i % nodes.length]!
    const spaceOf = (i: number) => `bench-${i % spaces}`
    // Warm every space's entity once.
    for (let s = 0; s < spaces; s++) await via(s).call("POST", "/v1/record", { space_id: spaceOf(s), content: "Ava opened the bench." })

    const record = await load(requests, (i) =>
      via(i).call("POST", "/v1/record", { space_id: spaceOf(i), content: `${pick(NAMES)} photographed ${pick(THINGS)} ${pick(PLACES)}.` }))
    const retrieve = await load(requests, (i) =>
      via(i).call("POST", "/v1/retrieve", { space_id: spaceOf(i), query: `What did ${pick(NAMES)} photograph?`, limit: 10 }))

    // One space of 500 memories, then five rounds of: 20 retrieves alone (quiet), then 50 records and 20 retrieves at once.
    for (let i = 0; i < 500; i += 100) {
      const items = Array.from({ length: 100 }, () => ({ content: `${pick(NAMES)} photographed ${pick(THINGS)} ${pick(PLACES)}.` }))
      const { job_id } = await via(0).call("POST", "/v1/record/batch", { space_id: "bench-mixed", items })
      while (["queued", "processing"].includes((await via(0).call("GET", `/v1/spaces/bench-mixed/jobs/${job_id}`)).status)) {
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    const quiet: Array<number> = []
    const mixed: Array<number> = []
    const timed = async (out: Array<number>, call: Promise<unknown>) => {
      const t = performance.now()
      await call
      out.push(performance.now() - t)
    }
    for (let round = 0; round < 5; round++) {
      for (let q = 0; q < 20; q++) {
        await timed(quiet, via(q).call("POST", "/v1/retrieve", { space_id: "bench-mixed", query: `What did ${pick(NAMES)} photograph?`, limit: 10 }))
      }
      const writes = Array.from({ length: 50 }, (_, w) =>
        via(w).call("POST", "/v1/record", { space_id: "bench-mixed", content: `${pick(NAMES)} photographed ${pick(THINGS)} ${pick(PLACES)}.` }))
      const reads = Array.from({ length: 20 }, (_, q) =>
        timed(mixed, via(q).call("POST", "/v1/retrieve", { space_id: "bench-mixed", query: `What did ${pick(NAMES)} photograph?`, limit: 10 })))
      await Promise.all([...writes, ...reads])
    }
    return {
      nodes: nodeCount,
      record,
      retrieve,
      mixed: {
        quiet_p95_ms: Number(percentile(quiet, 95).toFixed(1)),
        mixed_p50_ms: Number(percentile(mixed, 50).toFixed(1)),
        mixed_p95_ms: Number(percentile(mixed, 95).toFixed(1))
      }
    }
  } finally {
    for (const node of nodes.reverse()) await node.stop()
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  }
}

const results = []
for (const count of nodeCounts) {
  const result = await run(count)
  results.push(result)
  console.log(`${count} node(s): record ${result.record.per_s}/s p95 ${result.record.p95_ms} ms; ` +
    `retrieve ${result.retrieve.per_s}/s p95 ${result.retrieve.p95_ms} ms; ` +
    `one space, 50 records + 20 retrieves at once: retrieve p50 ${result.mixed.mixed_p50_ms} ms, p95 ${result.mixed.mixed_p95_ms} ms ` +
    `(quiet p95 ${result.mixed.quiet_p95_ms} ms)`)
}
if (asJson) console.log(JSON.stringify(results))
