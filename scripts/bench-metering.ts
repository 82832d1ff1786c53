/**
 * `npm run bench:metering -- [--calls 2000] [--json]`: the latency metering
 * adds to a retrieve, measured on the calls the retrieve path makes: `admit`
 * (the organization's plan and period, one read; the rate-limit window in
 * the cache) and the search debit (a ledger entry and the counter, in one
 * transaction, keyed by the request id), each iteration a new request.
 * Profiles: the embedded default (PGlite, in-process cache) always; with
 * DATABASE_URL also PostgreSQL with the in-process cache, and with REDIS_URL
 * too PostgreSQL with Redis (use a scratch database: the bench signs up an
 * organization in it).
 */
import { Effect, FiberRef, Layer, Option, Redacted } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cache } from "../layers/Cache.ts"
import * as Embedded from "../layers/Embedded.ts"
import * as Server from "../layers/Server.ts"
import { AppConfig, type AppConfigShape } from "../src/config/AppConfig.ts"
import { CurrentRequestId } from "../src/domain/RequestContext.ts"
import { Accounts } from "../src/identity/Accounts.ts"
import { CurrentMeterReport, Metering, newReport } from "../src/metering/Metering.ts"
import { arg, percentile } from "./BenchServer.ts"

const calls = Number(arg("--calls", "2000"))
const warmup = Math.min(200, Math.floor(calls / 5))
const asJson = process.argv.includes("--json")
const round = (ms: number) => Math.round(ms * 1000) / 1000

interface Profile {
  readonly name: string
  readonly overrides: Partial<AppConfigShape>
  readonly store: "embedded" | "server"
}

const dataDir = mkdtempSync(join(tmpdir(), "engram-bench-metering-"))
const profiles: Array<Profile> = [
  { name: "embedded (PGlite, in-process cache)", store: "embedded", overrides: { dataDir, databaseUrl: Option.none(), redisUrl: Option.none() } }
]
const databaseUrl = process.env.DATABASE_URL
const redisUrl = process.env.REDIS_URL
if (databaseUrl) {
  profiles.push({
    name: "PostgreSQL, in-process cache",
    store: "server",
    overrides: { databaseUrl: Option.some(Redacted.make(databaseUrl)), redisUrl: Option.none() }
  })
  if (redisUrl) {
    profiles.push({
      name: "PostgreSQL, Redis",
      store: "server",
      overrides: { databaseUrl: Option.some(Redacted.make(databaseUrl)), redisUrl: Option.some(Redacted.make(redisUrl)) }
    })
  }
}

/** One retrieve's metering, as the request path runs it: a fresh report and request id each time. */
const measure = Effect.gen(function*() {
  const accounts = yield* Accounts
  const metering = yield* Metering
  const session = yield* accounts.signup({
    email: `bench-metering-${Date.now()}-${process.pid}@example.test`,
    password: "correct horse battery",
    orgName: "Bench metering"
  })
  const principal = { orgId: session.org_id }
  const timings: Array<number> = []
  const admits: Array<number> = []
  for (let i = 0; i < warmup + calls; i++) {
    const started = performance.now()
    let admitted = 0
    yield* Effect.gen(function*() {
      yield* metering.admit(principal)
      admitted = performance.now() - started
      yield* metering.charge(session.org_id, "search", { spaceId: "bench" })
    }).pipe(
      Effect.locally(CurrentRequestId, `bench-${process.pid}-${i}`),
      Effect.locally(CurrentMeterReport, newReport())
    )
    if (i >= warmup) {
      timings.push(performance.now() - started)
      admits.push(admitted)
    }
  }
  return { timings, admits }
})

const results: Array<Record<string, unknown>> = []
for (const profile of profiles) {
  const config = AppConfig.make({
    ...profile.overrides,
    plansConfig: Option.some(join(import.meta.dirname, "bench-plans.json")),
    stripe: Option.none()
  })
  const store = profile.store === "embedded" ? Embedded.Store : Server.Store
  const layer = Layer.mergeAll(Metering.Default, Accounts.Default).pipe(
    Layer.provide(Layer.merge(store, Cache)),
    Layer.provide(config)
  )
  const { admits, timings } = await Effect.runPromise(measure.pipe(Effect.provide(layer), Effect.scoped))
  const summary = {
    profile: profile.name,
    calls,
    p50_ms: round(percentile(timings, 50)),
    p95_ms: round(percentile(timings, 95)),
    p99_ms: round(percentile(timings, 99)),
    admit_p50_ms: round(percentile(admits, 50)),
    admit_p95_ms: round(percentile(admits, 95))
  }
  results.push(summary)
  console.log(`${profile.name}: metering per retrieve p50 ${summary.p50_ms} ms / p95 ${summary.p95_ms} ms / p99 ${summary.p99_ms} ms ` +
    `(of which admit p50 ${summary.admit_p50_ms} ms / p95 ${summary.admit_p95_ms} ms) over ${calls} calls`)
}
if (!databaseUrl) console.log("PostgreSQL and Redis skipped: set DATABASE_URL (and REDIS_URL) to a scratch database to measure them")
if (asJson) console.log(JSON.stringify(results))
rmSync(dataDir, { recursive: true, force: true })
