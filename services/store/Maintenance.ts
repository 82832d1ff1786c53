/**
 * What a PostgreSQL server's background processes do, done for the embedded
 * store. PGlite runs PostgreSQL in single-user mode: no checkpointer (the
 * write-ahead log grows until a CHECKPOINT, 352 MB for 18 MB of text in
 * bench:real) and no autovacuum (rows left dead by updates and deletes are
 * never made reusable, so the files grow under churn). A loop checkpoints
 * once the log has grown by CHECKPOINT_BYTES since the last checkpoint (or by
 * a little, when writes have paused), and vacuums a table as autovacuum would:
 * once its dead rows are 50 plus a fifth of its live ones (read from the
 * store's statistics, flushed first), when writes have paused for a moment,
 * or regardless once they are five times that, or while the table is small
 * (a vacuum of it is quick). A settled write leaves its queued request (the
 * whole turn) as a dead row: vacuumed this way, the queue's table holds about
 * what is queued, not every turn ever written. A table is analyzed as
 * autovacuum would (once a tenth of its rows changed since), so that its
 * rows' width is what they hold now.
 * A vacuum makes dead rows' room reusable but never gives it back: a table
 * whose rows were once large (the queue's, holding whole turns until they
 * settle) or that lost many rows keeps its size. Once writes pause, a table
 * of some size whose file is well beyond what its live rows need (estimated
 * from the planner's statistics: live rows x their average width plus each
 * row's header) is rewritten (VACUUM FULL), and not again until it has grown
 * by a quarter since.
 * Each pass is a span; a failure is logged and the loop goes on.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Duration, Effect, Exit, Layer, Schema } from "effect"
import { decodeRows, Int8 } from "./Columns.ts"
import { StoreGrowth } from "./Statistics.ts"

/** How often the loop looks. */
const EVERY = Duration.seconds(5)
const MB = 1 << 20
/** Log since the last checkpoint that always brings one. */
export const CHECKPOINT_BYTES = 16 * MB
/** Log since the last checkpoint that brings one once writes pause. */
const QUIET_CHECKPOINT_BYTES = 2 * MB
/** What "writes have paused" means. */
const QUIET_MS = 3_000

/** Dead rows that make a table due for a vacuum (autovacuum's defaults). */
export const vacuumDue = (table: { readonly live: number; readonly dead: number }) => table.dead >= 50 + 0.2 * table.live
/** Rows changed since the last analyze that make a table due for one (autovacuum's defaults): its row width then is current. */
export const analyzeDue = (table: { readonly live: number; readonly changed: number }) => table.changed >= 50 + 0.1 * table.live
/** Due this many times over, a table is vacuumed even while writes go on ... */
const FORCED = 5
/** ... and so is a table smaller than this, whose vacuum takes a few milliseconds. */
const SMALL_BYTES = 32 * MB

/** Below this a table is never rewritten: what it could give back is not worth a pause. */
export const COMPACT_MIN_BYTES = 4 * MB
/** A file this many times what its live rows need (plus a megabyte) is rewritten. */
export const BLOATED = 1.5
/** A row's header and line pointer, beside its columns' widths. */
const ROW_OVERHEAD = 28

/** Whether a table's file is worth rewriting: well beyond what its live rows need. */
export const compactDue = (table: { readonly live: number; readonly bytes: number; readonly width: number }) =>
  table.bytes >= COMPACT_MIN_BYTES && table.bytes > BLOATED * table.live * (table.width + ROW_OVERHEAD) + MB

const decodeSize = decodeRows(Schema.Struct({ bytes: Int8 }))
const decodeWal = decodeRows(Schema.Struct({ current: Int8, redo: Int8 }))
const decodeTables = decodeRows(
  Schema.Struct({ name: Schema.String, live: Int8, dead: Int8, changed: Int8, bytes: Int8, width: Schema.NullOr(Int8) })
)

/** The log's position now and at the last checkpoint's redo point, in bytes. */
const walPositions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS current,
    (SELECT redo_lsn FROM pg_control_checkpoint()) - '0/0'::pg_lsn AS redo`.pipe(Effect.flatMap(decodeWal))
  return rows[0] ?? { current: 0, redo: 0 }
})

/**
 * One pass of maintenance: what it vacuumed, rewrote and whether it
 * checkpointed. `compactedAt` keeps each rewritten table's size just after its
 * rewrite, from pass to pass.
 */
export const maintainOnce = (compactedAt: Map<string, number>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const growth = yield* StoreGrowth
    const quiet = growth.quietFor() >= QUIET_MS
    // Single-user PostgreSQL reports its table statistics only when asked to: flushed by the next statement.
    yield* sql`SELECT pg_stat_force_next_flush()`
    // The statistics' live count starts again from zero when the store opens (single-user PostgreSQL keeps no
    // statistics file), so the catalog's count from the last vacuum or analyze stands in until they catch up:
    // a table of 100,000 rows is not taken for an empty one and rewritten (seconds, the store held) at every start.
    const tables = yield* sql`SELECT s.relname AS name,
        CASE WHEN c.reltuples >= 0 THEN greatest(s.n_live_tup, c.reltuples::bigint) ELSE s.n_live_tup END AS live,
        s.n_dead_tup AS dead, s.n_mod_since_analyze AS changed, pg_relation_size(s.relid) AS bytes,
        (SELECT sum(p.avg_width) FROM pg_stats p WHERE p.schemaname = 'public' AND p.tablename = s.relname) AS width
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.schemaname = 'public'`.pipe(Effect.flatMap(decodeTables))
    const vacuumed = tables.filter((t) =>
      vacuumDue(t) && (quiet || t.bytes < SMALL_BYTES || t.dead >= FORCED * (50 + 0.2 * t.live))
    ).map((t) => t.name)
    for (const name of vacuumed) yield* sql`VACUUM ${sql(name)}`
    // Statistics kept current as autovacuum keeps them: the rewrite below judges a table by its rows' width now
    // (a queue's rows emptied after they settle are not judged by the width they had when full).
    const analyzed = tables.filter((t) => analyzeDue(t) && (quiet || t.bytes < SMALL_BYTES)).map((t) => t.name)
    for (const name of analyzed) yield* sql`ANALYZE ${sql(name)}`
    // Rewrites wait for a pause in writes; a table without statistics, or whose statistics were just taken,
    // is judged on them at the next pass.
    const compacted: Array<string> = []
    if (quiet) {
      for (const table of tables) {
        if (table.bytes < COMPACT_MIN_BYTES || table.bytes < (compactedAt.get(table.name) ?? 0) * 1.25) continue
        if (analyzed.includes(table.name)) continue
        if (table.width === null) yield* sql`ANALYZE ${sql(table.name)}`
        else if (compactDue({ ...table, width: table.width })) {
          yield* sql`VACUUM FULL ${sql(table.name)}`
          const after = yield* sql`SELECT pg_relation_size(${table.name}::regclass) AS bytes`.pipe(Effect.flatMap(decodeSize))
          compactedAt.set(table.name, after[0]?.bytes ?? table.bytes)
          compacted.push(table.name)
        }
      }
    }
    const wal = yield* walPositions
    const sinceCheckpoint = wal.current - wal.redo
    // A vacuum's own log goes with the checkpoint after it.
    const checkpointed = vacuumed.length > 0 || compacted.length > 0 || sinceCheckpoint >= CHECKPOINT_BYTES || (quiet && sinceCheckpoint >= QUIET_CHECKPOINT_BYTES)
    if (checkpointed) yield* sql`CHECKPOINT`
    yield* Effect.annotateCurrentSpan({
      wal_since_checkpoint: sinceCheckpoint,
      vacuumed: vacuumed.join(","),
      analyzed: analyzed.join(","),
      compacted: compacted.join(","),
      checkpointed
    })
    return { vacuumed, analyzed, compacted, checkpointed }
  }).pipe(Effect.withSpan("Store.maintain"))

export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const context = yield* Effect.context<SqlClient.SqlClient | StoreGrowth>()
  const pass = maintainOnce(new Map()).pipe(Effect.provide(context))

  const loop = Effect.gen(function*() {
    let failures = 0
    while (true) {
      const exit = yield* Effect.exit(pass)
      if (Exit.isFailure(exit)) {
        if (Cause.isInterruptedOnly(exit.cause)) return
        failures++
        yield* Effect.logWarning(`embedded store maintenance failed (${failures} in a row); trying again`, exit.cause)
      } else failures = 0
      // Backed off while it fails, at most 5 minutes apart.
      yield* Effect.sleep(Duration.millis(Math.min(300_000, Duration.toMillis(EVERY) * 2 ** Math.min(failures, 6))))
    }
  })
  yield* loop.pipe(Effect.annotateLogs({ loop: "store-maintenance" }), Effect.forkScoped)
}))
