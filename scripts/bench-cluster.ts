/**
 * `npm run bench:cluster -- [--nodes 1,3] [--spaces 12] [--requests 600] [--clients 8] [--json]`
 *
 * Record and retrieve throughput and p95 through a cluster of N `engram serve`
 * nodes (server profile: PostgreSQL at DATABASE_URL, default the local
 * server, in a database of its own; Redis at REDIS_URL), requests spread over
 * the nodes round-robin, so most reach a space whose entity lives on another
 * node. Then recall under writes to the same space: a reader alone and while
 * five writers record without pause (steady), and 20 retrieves at once alone
 * and with 50 records at once (burst).
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
      WEBHOOK_SECRET_KEY: process.env.WEBHOOK_SECRET_KEY ?? "bench-webhook-secret-key-0123456789abcdef",
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

    // One space of 500 memories, recalled while it is written to.
    for (let i = 0; i < 500; i += 100) {
      const items = Array.from({ length: 100 }, () => ({ content: `${pick(NAMES)} photographed ${pick(THINGS)} ${pick(PLACES)}.` }))
      const { job_id } = await via(0).call("POST", "/v1/record/batch", { space_id: "bench-mixed", items })
      while (["queued", "processing"].includes((await via(0).call("GET", `/v1/spaces/bench-mixed/jobs/${job_id}`)).status)) {
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    const retrieveOnce = (i: number) => via(i).call("POST", "/v1/retrieve", { space_id: "bench-mixed", query: `What did ${pick(NAMES)} photograph?`, limit: 10 })
    const recordOnce = (i: number) =>
      via(i).call("POST", "/v1/record", { space_id: "bench-mixed", content: `${pick(NAMES)} photographed ${pick(THINGS)} ${pick(PLACES)}.` })
    const timed = async (out: Array<number>, call: Promise<unknown>) => {
      const t = performance.now()
      await call
      out.push(performance.now() - t)
    }

    // Steady: one reader recalling, alone, then while five writers record into the same space without pause.
    const reader = async () => {
      const latencies: Array<number> = []
      for (let i = 0; i < 100; i++) await timed(latencies, retrieveOnce(i))
      return latencies
    }
    const alone = await reader()
    let writing = true
    let written = 0
    const writers = Array.from({ length: 5 }, async (_, w) => {
      for (let i = w; writing; i += 5) {
        await recordOnce(i)
        written++
      }
    })
    const started = performance.now()
    const underWrites = await reader()
    const seconds = (performance.now() - started) / 1000
    writing = false
    await Promise.all(writers)

    // Burst, the shape: 20 retrieves at once alone, then 50 records and 20 retrieves at once; five rounds.
    const burstAlone: Array<number> = []
    const burstMixed: Array<number> = []
    for (let round = 0; round < 5; round++) {
      await Promise.all(Array.from({ length: 20 }, (_, q) => timed(burstAlone, retrieveOnce(q))))
      await Promise.all([
        ...Array.from({ length: 50 }, (_, w) => recordOnce(w)),
        ...Array.from({ length: 20 }, (_, q) => timed(burstMixed, retrieveOnce(q)))
      ])
    }
    const ms = (values: Array<number>, p: number) => Number(percentile(values, p).toFixed(1))
    return {
      nodes: nodeCount,
      record,
      retrieve,
      steady: {
        alone_p50_ms: ms(alone, 50),
        alone_p95_ms: ms(alone, 95),
        under_writes_p50_ms: ms(underWrites, 50),
        under_writes_p95_ms: ms(underWrites, 95),
        writes_per_s: Number((written / seconds).toFixed(1))
      },
      burst: {
        alone_p95_ms: ms(burstAlone, 95),
        mixed_p50_ms: ms(burstMixed, 50),
        mixed_p95_ms: ms(burstMixed, 95)
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
    `one space, a reader alone p95 ${result.steady.alone_p95_ms} ms, under 5 writers (${result.steady.writes_per_s} records/s) ` +
    `p95 ${result.steady.under_writes_p95_ms} ms; 20 retrieves at once p95 ${result.burst.alone_p95_ms} ms, ` +
    `with 50 records at once p95 ${result.burst.mixed_p95_ms} ms`)
}
if (asJson) console.log(JSON.stringify(results))
