import { it, layer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule, Schema } from "effect"
import { expect } from "vitest"
import { layerPglite } from "../../services/store/Database.ts"
import { analyzeGrown, layer as statisticsLayer, needsAnalyze, StoreGrowth } from "../../services/store/Statistics.ts"
import { call, createKey, signup, waitForJob } from "../support/Http.ts"
import { profiles } from "../support/Profiles.ts"
import { testNode } from "../support/TestNode.ts"

const Analyzed = Schema.Array(Schema.Struct({ reltuples: Schema.Number }))

const reltuples = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT reltuples FROM pg_class WHERE relname = ${table}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Analyzed)),
      Effect.map((rows) => rows[0]!.reltuples)
    ))

it("a table is analyzed when it first holds a few pages, and again only after it has doubled", () => {
  expect(needsAnalyze({ pages: 0, analyzed_pages: 0, analyzed: false })).toBe(false)
  expect(needsAnalyze({ pages: 7, analyzed_pages: 0, analyzed: false })).toBe(false)
  expect(needsAnalyze({ pages: 8, analyzed_pages: 0, analyzed: false })).toBe(true)
  expect(needsAnalyze({ pages: 8, analyzed_pages: 0, analyzed: true })).toBe(true)
  expect(needsAnalyze({ pages: 100, analyzed_pages: 60, analyzed: true })).toBe(false)
  expect(needsAnalyze({ pages: 120, analyzed_pages: 60, analyzed: true })).toBe(true)
})

it.scoped("the embedded store gains planner statistics as its tables grow, not while they are empty", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE grows (id integer PRIMARY KEY, body text NOT NULL)`
    yield* sql`CREATE TABLE stays_empty (id integer PRIMARY KEY)`

    expect(yield* analyzeGrown).toEqual([])
    expect(yield* reltuples("grows")).toBe(-1)

    yield* sql`INSERT INTO grows SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g`
    expect(yield* analyzeGrown).toEqual(["grows"])
    expect(yield* reltuples("grows")).toBe(2000)
    expect(yield* reltuples("stays_empty")).toBe(-1)

    // Not again until it has doubled.
    yield* sql`INSERT INTO grows SELECT g, repeat('x', 100) FROM generate_series(2001, 2500) g`
    expect(yield* analyzeGrown).toEqual([])
    yield* sql`INSERT INTO grows SELECT g, repeat('x', 100) FROM generate_series(2501, 6000) g`
    expect(yield* analyzeGrown).toEqual(["grows"])
    expect(yield* reltuples("grows")).toBe(6000)
  }).pipe(Effect.provide(layerPglite({ dataDir: "memory://" }))), 60_000)

/** Polls until `table` has statistics, for at most `within`; answers how long that took, or null. */
const analyzedWithin = (table: string, within: Duration.DurationInput) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (Date.now() - started < Duration.toMillis(within)) {
      if ((yield* reltuples(table)) >= 0) return Date.now() - started
      yield* Effect.sleep("50 millis")
    }
    return null
  })

it.live("rows reported written bring the check forward once they have doubled; a handful do not", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const growth = yield* StoreGrowth
    // The tick is an hour away: only a report of writes can bring a check before the test ends.
    yield* sql`CREATE TABLE grows (id integer PRIMARY KEY, body text NOT NULL)`
    yield* sql`INSERT INTO grows SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g`
    yield* growth.wrote(10)
    expect(yield* analyzedWithin("grows", "1500 millis")).toBeNull()
    yield* growth.wrote(2000)
    expect(yield* analyzedWithin("grows", "3 seconds")).not.toBeNull()
    expect(yield* reltuples("grows")).toBe(2000)
  }).pipe(Effect.provide(statisticsLayer(Duration.hours(1)).pipe(Layer.provideMerge(layerPglite({ dataDir: "memory://" }))))), 60_000)

/** Whether `table` was analyzed by an ANALYZE statement (ours), not by autovacuum (the server's own). */
const Manual = Schema.Array(Schema.Struct({ ours: Schema.Boolean }))
const analyzedByUs = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT last_analyze IS NOT NULL AS ours FROM pg_stat_user_tables WHERE relname = ${table}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Manual)),
      Effect.map((rows) => rows[0]?.ours === true)
    ))

/**
 * A space's first stored group, through the API: the memories table is
 * analyzed within seconds, not at the next 15 s tick (embedded) or at
 * autovacuum's first visit to a new database (server), so the checks of its
 * history rows stop filtering every memory of the space (docs/footprint.md).
 */
for (const profile of profiles) {
  layer(testNode(profile.infrastructure(), { consolidation: false }), { excludeTestServices: true, timeout: Duration.minutes(2) })(
    `planner statistics of a node's first writes [${profile.name}]`,
    (it) => {
      it.effect("the memories a first batch stores are analyzed within seconds of the job finishing", () =>
        Effect.gen(function*() {
          const owner = yield* signup()
          const key = (yield* createKey(owner.token)).raw_key
          const spaceId = `stats-${Date.now()}`
          expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: spaceId } })).status).toBe(201)
          expect(yield* reltuples("memories")).toBe(-1)
          const sentence = (i: number) => `Guest ${i} booked the corner table for the ${i % 28 + 1}th and asked for a quiet room upstairs.`
          const items = Array.from({ length: 100 }, (_, i) => ({ content: Array.from({ length: 6 }, (_, k) => sentence(i * 6 + k)).join(" ") }))
          const queued = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } })
          expect(queued.status, queued.text).toBe(202)
          // Up to 60 s (1,200 polls 50 ms apart).
          const job = yield* waitForJob(key, spaceId, queued.body.job_id, 1200)
          expect(job.status, JSON.stringify(job)).toBe("completed")
          expect(yield* analyzedWithin("memories", "3 seconds")).not.toBeNull()
          // By this node's check, not by a server's autovacuum happening to pass (its statistics reach the view within a second or so).
          yield* analyzedByUs("memories").pipe(
            Effect.filterOrFail((ours) => ours, () => "not analyzed by an ANALYZE statement"),
            Effect.retry(Schedule.spaced("100 millis").pipe(Schedule.upTo("5 seconds")))
          )
        }))
    }
  )
}
