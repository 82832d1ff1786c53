/**
 * Planner statistics for the embedded store. A PostgreSQL server's autovacuum
 * analyzes a table as it grows; PGlite runs no autovacuum, so without this
 * every table keeps "never analyzed" estimates and a join such as the graph's
 * edge count picks nested loops over thousands of rows (1.3 s instead of 6 ms
 * with 13,691 edges, docs/footprint.md). A table is analyzed once it holds a
 * few pages and again each time it has doubled since: a handful of ANALYZEs
 * over a space's life, each bounded by ANALYZE's fixed sample. Tables are
 * never analyzed while empty, whose statistics would tell the planner they
 * stay empty.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Exit, Layer, Schema } from "effect"
import { decodeRows, Int8 } from "./Columns.ts"

/** Below this many 8 kB pages a table is too small for its plan to matter. */
export const MIN_PAGES = 8

const Table = Schema.Struct({ name: Schema.String, pages: Int8, analyzed_pages: Int8, analyzed: Schema.Boolean })
const decodeTables = decodeRows(Table)

/** Whether a table has grown enough since its last ANALYZE (or has none) to need a new one. */
export const needsAnalyze = (table: { readonly pages: number; readonly analyzed_pages: number; readonly analyzed: boolean }) =>
  table.pages >= MIN_PAGES && (!table.analyzed || table.pages >= 2 * Math.max(table.analyzed_pages, MIN_PAGES / 2))

/** Analyzes the public tables that need it; returns their names. */
export const analyzeGrown = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql`SELECT c.relname AS name,
      pg_relation_size(c.oid) / current_setting('block_size')::int AS pages,
      c.relpages AS analyzed_pages,
      (c.reltuples >= 0) AS analyzed
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind = 'r'`.pipe(Effect.flatMap(decodeTables))
  const grown = tables.filter(needsAnalyze).map((t) => t.name)
  for (const name of grown) yield* sql`ANALYZE ${sql(name)}`
  yield* Effect.annotateCurrentSpan({ tables: grown.join(",") })
  return grown
}).pipe(Effect.withSpan("Store.analyze"))

/**
 * Checks every `interval` (the first check right away). A failed check is
 * logged and retried on the next tick with the interval doubled (at most
 * 5 minutes), so a broken store is reported, not hammered, and never stops
 * the loop.
 */
export const layerEmbedded = (interval: Duration.DurationInput = Duration.seconds(15)) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const base = Duration.toMillis(interval)
      let failures = 0
      while (true) {
        const exit = yield* Effect.exit(analyzeGrown)
        if (Exit.isSuccess(exit)) {
          failures = 0
          if (exit.value.length > 0) yield* Effect.logDebug(`analyzed ${exit.value.join(", ")}`)
        } else if (Cause.isInterruptedOnly(exit.cause)) {
          return
        } else {
          failures++
          yield* Effect.logWarning(`planner statistics check failed (${failures} in a row)`, exit.cause)
        }
        yield* Effect.sleep(Duration.millis(Math.min(300_000, base * 2 ** Math.min(failures, 5))))
      }
    }).pipe(Effect.annotateLogs({ loop: "store-statistics" }), Effect.forkScoped)
  )
