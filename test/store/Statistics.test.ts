import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { expect } from "vitest"
import { layerPglite } from "../../services/store/Database.ts"
import { analyzeGrown, needsAnalyze } from "../../services/store/Statistics.ts"

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
