import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Schema } from "effect"
import { expect } from "vitest"
import { layerPglite } from "../../services/store/Database.ts"
import { compactDue, maintainOnce } from "../../services/store/Maintenance.ts"
import { StoreGrowth } from "../../services/store/Statistics.ts"

const MB = 1 << 20

it("a table is rewritten only when it is of some size and well beyond what its live rows need", () => {
  // 10,000 rows of 200 bytes need about 2.3 MB.
  expect(compactDue({ live: 10_000, bytes: 8 * MB, width: 200 })).toBe(true)
  expect(compactDue({ live: 10_000, bytes: 4 * MB, width: 200 })).toBe(false)
  // Small tables are left alone, however bloated.
  expect(compactDue({ live: 10, bytes: 3 * MB, width: 200 })).toBe(false)
  expect(compactDue({ live: 0, bytes: 4 * MB, width: 0 })).toBe(true)
})

const Size = Schema.Array(Schema.Struct({ bytes: Schema.Union(Schema.Number, Schema.NumberFromString) }))
const tableBytes = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT pg_relation_size(${table}::regclass) AS bytes`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Size)),
      Effect.map((rows) => rows[0]!.bytes)
    ))

const quietFor = { ms: 0 }
const Growth = Layer.succeed(StoreGrowth, { wrote: () => Effect.void, quietFor: Effect.sync(() => quietFor.ms) })

it.scoped("a table whose rows shrank is vacuumed while writes go on, and rewritten to its live size once they pause", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Rows that hold a large payload until they settle, as the write queue's do.
    yield* sql`CREATE TABLE queue_like (id integer PRIMARY KEY, request text)`
    yield* sql`INSERT INTO queue_like SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 8000) g`
    yield* sql`UPDATE queue_like SET request = NULL`
    const grown = yield* tableBytes("queue_like")
    expect(grown).toBeGreaterThan(10 * MB)

    const compactedAt = new Map<string, number>()
    // Writes going on: the dead rows are vacuumed (the table is small enough), nothing is rewritten.
    quietFor.ms = 0
    const busy = yield* maintainOnce(compactedAt)
    expect(busy.vacuumed).toContain("queue_like")
    expect(busy.compacted).toEqual([])
    expect(yield* tableBytes("queue_like")).toBe(grown)

    // Writes paused: statistics first if the table has none, then the rewrite.
    quietFor.ms = 60_000
    let rewritten = false
    for (let pass = 0; pass < 3 && !rewritten; pass++) rewritten = (yield* maintainOnce(compactedAt)).compacted.includes("queue_like")
    expect(rewritten).toBe(true)
    const after = yield* tableBytes("queue_like")
    expect(after).toBeLessThan(MB)
    expect(yield* sql`SELECT count(*)::int AS n FROM queue_like`).toEqual([{ n: 8000 }])

    // Nothing more to give back: the next pass leaves it.
    expect((yield* maintainOnce(compactedAt)).compacted).toEqual([])
  }).pipe(Effect.provide(Layer.merge(layerPglite({ dataDir: "memory://" }), Growth))), 120_000)

it.scoped("a table is not taken for empty when the store's statistics start again from zero (a restart)", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // About 6 MB of live rows and nothing dead: nothing to give back.
    yield* sql`CREATE TABLE settled_like (id integer PRIMARY KEY, body text)`
    yield* sql`INSERT INTO settled_like SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 20000) g`
    yield* sql`VACUUM ANALYZE settled_like`
    const size = yield* tableBytes("settled_like")
    expect(size).toBeGreaterThan(4 * MB)
    // What opening the store again does to the statistics: every count back to zero (what this
    // connection counted is flushed first, so that nothing pending comes back after the reset).
    yield* sql`SELECT pg_stat_force_next_flush()`
    yield* sql`SELECT 1`
    yield* sql`SELECT pg_stat_reset()`
    yield* sql`SELECT pg_stat_force_next_flush()`
    const Live = Schema.Array(Schema.Struct({ live: Schema.Union(Schema.Number, Schema.NumberFromString) }))
    const counted = yield* sql`SELECT n_live_tup AS live FROM pg_stat_user_tables WHERE relname = 'settled_like'`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Live))
    )
    expect(counted[0]!.live).toBe(0)

    quietFor.ms = 60_000
    const compactedAt = new Map<string, number>()
    for (let pass = 0; pass < 3; pass++) expect((yield* maintainOnce(compactedAt)).compacted).not.toContain("settled_like")
    expect(yield* tableBytes("settled_like")).toBe(size)
  }).pipe(Effect.provide(Layer.merge(layerPglite({ dataDir: "memory://" }), Growth))), 120_000)

it.scoped("a table whose rows were measured while large is measured again once they shrink, then rewritten", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE emptied_like (id integer PRIMARY KEY, request text)`
    yield* sql`INSERT INTO emptied_like SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 8000) g`
    // Statistics taken while every row holds its request: about 1.3 KB wide.
    yield* sql`ANALYZE emptied_like`
    yield* sql`UPDATE emptied_like SET request = NULL`
    yield* sql`VACUUM emptied_like`
    const grown = yield* tableBytes("emptied_like")
    expect(grown).toBeGreaterThan(10 * MB)

    quietFor.ms = 60_000
    const compactedAt = new Map<string, number>()
    let analyzed = false
    let rewritten = false
    for (let pass = 0; pass < 3 && !rewritten; pass++) {
      const done = yield* maintainOnce(compactedAt)
      analyzed ||= done.analyzed.includes("emptied_like")
      rewritten = done.compacted.includes("emptied_like")
    }
    expect(analyzed).toBe(true)
    expect(rewritten).toBe(true)
    expect(yield* tableBytes("emptied_like")).toBeLessThan(MB)
  }).pipe(Effect.provide(Layer.merge(layerPglite({ dataDir: "memory://" }), Growth))), 120_000)

it.scoped("a large table due for new statistics waits for writes to pause, unless it is five times due; a small one does not wait", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // About 3 MB of rows, measured, then a fifth more rows: due (a tenth), not five times due (a half).
    yield* sql`CREATE TABLE grown_like (id integer PRIMARY KEY, body text)`
    yield* sql`INSERT INTO grown_like SELECT g, repeat(md5(g::text), 4) FROM generate_series(1, 10000) g`
    yield* sql`CREATE TABLE small_like (id integer PRIMARY KEY, body text)`
    yield* sql`INSERT INTO small_like SELECT g, md5(g::text) FROM generate_series(1, 1000) g`
    // The inserts counted before the statistics are taken (single-user PostgreSQL reports counts when asked).
    yield* sql`SELECT pg_stat_force_next_flush()`
    yield* sql`SELECT 1`
    yield* sql`ANALYZE grown_like`
    yield* sql`ANALYZE small_like`
    yield* sql`INSERT INTO grown_like SELECT g, repeat(md5(g::text), 4) FROM generate_series(10001, 12000) g`
    yield* sql`INSERT INTO small_like SELECT g, md5(g::text) FROM generate_series(1001, 1500) g`
    expect(yield* tableBytes("grown_like")).toBeGreaterThan(MB)
    expect(yield* tableBytes("small_like")).toBeLessThan(MB)

    const compactedAt = new Map<string, number>()
    quietFor.ms = 0
    const busy = yield* maintainOnce(compactedAt)
    expect(busy.analyzed).toContain("small_like")
    expect(busy.analyzed).not.toContain("grown_like")

    quietFor.ms = 60_000
    expect((yield* maintainOnce(compactedAt)).analyzed).toContain("grown_like")

    // More than as many rows again while writes go on: five times due, analyzed without a pause.
    yield* sql`INSERT INTO grown_like SELECT g, repeat(md5(g::text), 4) FROM generate_series(12001, 27000) g`
    quietFor.ms = 0
    expect((yield* maintainOnce(compactedAt)).analyzed).toContain("grown_like")
  }).pipe(Effect.provide(Layer.merge(layerPglite({ dataDir: "memory://" }), Growth))), 120_000)

const Setting = Schema.Array(Schema.Struct({ setting: Schema.String }))

it.scoped("the embedded store keeps a small buffer pool and samples fewer rows for its statistics (ANALYZE runs on the event loop)", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const show = (name: string) =>
      sql`SELECT setting FROM pg_settings WHERE name = ${name}`.pipe(Effect.flatMap(Schema.decodeUnknown(Setting)), Effect.map((rows) => rows[0]?.setting))
    // In 8 kB pages.
    expect(yield* show("shared_buffers")).toBe("2048")
    expect(yield* show("default_statistics_target")).toBe("20")
  }).pipe(Effect.provide(layerPglite({ dataDir: "memory://" }))))
