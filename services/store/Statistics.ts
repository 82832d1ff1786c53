/**
 * Planner statistics as tables grow, on both profiles. PGlite runs no
 * autovacuum, so without this every table keeps "never analyzed" estimates
 * and a join such as the graph's edge count picks nested loops over
 * thousands of rows (1.3 s instead of 6 ms with 13,691 edges,
 * docs/footprint.md). A PostgreSQL server's autovacuum analyzes a table at
 * its next visit to the database (a minute apart by default), and plans
 * cached by each session in the meantime are made without statistics (see
 * `StoreGrowth`). A table is analyzed once it holds a few pages and again
 * each time it has doubled since: a handful of ANALYZEs over a space's life,
 * each bounded by ANALYZE's fixed sample; on a server, autovacuum's own
 * ANALYZEs (every 10% of growth) mostly leave nothing to do. Tables are
 * never analyzed while empty, whose statistics would tell the planner they
 * stay empty.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Queue, Schema } from "effect"
import { decodeRows, Int8 } from "./Columns.ts"

/**
 * Rows were written: the store's tables are checked soon instead of at the
 * next tick. A referential check's plan is cached by the session the
 * first time it runs and replanned only when the table is analyzed; planned
 * on a table without statistics, the check that a memory's history names a
 * memory picked `memories_document` (a tie of costs) and filtered every
 * memory of the space, once per history row: storing a group of 50 long turns
 * went from 80 ms to 270 ms over the first 7,000 memories, until the 15 s
 * check analyzed the table (docs/footprint.md). A new PostgreSQL database
 * did the same on some connections (1-2 ms per group of 200 on one, 45 ms
 * on another, seen with auto_explain) until autovacuum's first ANALYZE.
 */
export class StoreGrowth extends Context.Tag("engram/store/StoreGrowth")<StoreGrowth, {
  readonly wrote: (rows: number) => Effect.Effect<void>
  /** Milliseconds since rows were last written (what store maintenance waits on). */
  readonly quietFor: Effect.Effect<number>
}>() {}

/** Rows written before the first early check: a table this small has no plan to get wrong. */
const FIRST_WAKE_ROWS = 64
/** The least time between two checks, however fast rows are written. */
const SOONEST = Duration.seconds(1)

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
 * Checks every `interval` (the first check right away), and sooner (at most
 * once a second) when the rows written since the last check have doubled
 * the process's count, the pace at which `needsAnalyze` can have something
 * to do. A failed check is logged and retried on the next tick with the
 * interval doubled (at most 5 minutes), so a broken store is reported, not
 * hammered, and never stops the loop.
 */
export const layer = (interval: Duration.DurationInput = Duration.seconds(15)) =>
  Layer.scoped(
    StoreGrowth,
    Effect.gen(function*() {
      const wakes = yield* Queue.sliding<void>(1)
      let written = 0
      let writtenAtCheck = 0
      let lastWriteAt = 0
      const base = Duration.toMillis(interval)
      const loop = Effect.gen(function*() {
        let failures = 0
        while (true) {
          const startedAt = yield* Clock.currentTimeMillis
          writtenAtCheck = written
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
          const tick = Duration.millis(Math.min(300_000, base * 2 ** Math.min(failures, 5)))
          // A failing store is not checked again early: only the tick, backed off, brings the next check.
          const woken = failures > 0 ? Effect.never : Queue.take(wakes).pipe(
            Effect.zipRight(Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(Duration.millis(Math.max(0, Duration.toMillis(SOONEST) - (now - startedAt))))))
          )
          yield* Effect.raceFirst(Effect.sleep(tick), woken)
        }
      })
      yield* loop.pipe(Effect.annotateLogs({ loop: "store-statistics" }), Effect.forkScoped)
      return {
        quietFor: Effect.map(Clock.currentTimeMillis, (now) => now - lastWriteAt),
        wrote: (rows: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => {
            lastWriteAt = now
            written += rows
            return written >= Math.max(FIRST_WAKE_ROWS, 2 * writtenAtCheck) ? Queue.offer(wakes, undefined) : Effect.void
          }).pipe(Effect.asVoid)
      }
    })
  )
