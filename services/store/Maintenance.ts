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
 * rows' width is what they hold now: a small one at once, a larger one once
 * writes pause or when five times due (its sample holds the event loop).
 * A vacuum makes dead rows' room reusable but never gives it back: a table
 * whose rows were once large (the queue's, holding whole turns until they
 * settle) or that lost many rows keeps its size. Once writes pause, a table
 * of some size whose file is well beyond what its live rows need (estimated
 * from the planner's statistics: live rows x their average width plus each
 * row's header) is rewritten (VACUUM FULL), and not again until it has grown
 * by a quarter since.
 * Each pass is a span; a failure is logged and the loop goes on.
 *
 * Erasure. A vacuum makes a dead row's room reusable, not its bytes
 * unreadable, and the log keeps what was written until its segment is
 * removed. So when text was erased (a delete of a memory, document, space,
 * memory model or uploaded file, an edit of a memory's text: each notes a
 * request in `store_erasures` in its own transaction), the next pass once
 * writes pause (or ERASE_WITHIN after the oldest request, writes or not)
 * rewrites every table whose rows were updated or deleted since the last
 * erasure pass (VACUUM FULL: new files holding the live rows only, the old
 * ones truncated, indexes and TOAST rebuilt), then ends the log's segment
 * (pg_switch_wal) and checkpoints, which removes every older segment
 * (wal_recycle is off: nothing is kept for reuse). The first pass after a
 * start, when a request is owed from before it, rewrites every table.
 */
import { SqlClient } from "@effect/sql"
import { Cause, Clock, Duration, Effect, Exit, Layer, Schema } from "effect"
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

/** Dead rows that make a table of `live` rows due for a vacuum (autovacuum's defaults). */
const vacuumAt = (live: number) => 50 + 0.2 * live
export const vacuumDue = (table: { readonly live: number; readonly dead: number }) => table.dead >= vacuumAt(table.live)
/** Rows changed since the last analyze that make a table of `live` rows due for one (autovacuum's defaults): its row width then is current. */
const analyzeAt = (live: number) => 50 + 0.1 * live
export const analyzeDue = (table: { readonly live: number; readonly changed: number }) => table.changed >= analyzeAt(table.live)
/** Due this many times over, a table is vacuumed even while writes go on ... */
const FORCED = 5
/** ... and so is a table smaller than this, whose vacuum takes a few milliseconds. */
const SMALL_BYTES = 32 * MB
/**
 * ... and a table smaller than this is analyzed while writes go on (others
 * wait for a pause, or for five times their due, so that a table whose rows
 * churn without growing is measured again even if writes never pause): an
 * analyze holds the event loop for its whole sample, 100-370 ms for a
 * memories table of 3-25 MB, 25-64 ms for a queue of 2-5 MB, and every
 * recall waits behind it.
 */
const SMALL_ANALYZE_BYTES = MB

/** How long an erasure may wait for writes to pause before its pass runs anyway. */
export const ERASE_WITHIN = Duration.minutes(2)

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

const decodeChanges = decodeRows(Schema.Struct({ name: Schema.String, changes: Int8 }))
const decodePending = decodeRows(Schema.Struct({ last: Schema.NullOr(Int8), waited_ms: Schema.NullOr(Schema.Number) }))

/** Each table's rows updated or deleted since the store opened (single-user statistics start at zero then). */
const changeCounts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`SELECT pg_stat_force_next_flush()`
  const rows = yield* sql`SELECT relname AS name, n_tup_upd + n_tup_del AS changes FROM pg_stat_user_tables
    WHERE schemaname = 'public' AND relname <> 'store_erasures'`.pipe(Effect.flatMap(decodeChanges))
  return new Map(rows.map((row) => [row.name, row.changes]))
})

/**
 * One look at the erasures owed, and the pass when one is due: what it
 * rewrote. `since` holds each table's change count at the last erasure pass
 * (or at a look that found none owed); empty until the first look, when a
 * request owed rewrites every table.
 */
export const eraseOnce = (since: { counts: Map<string, number> | undefined }, quiet: boolean) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Counted before the requests are read: a change made after this count is in the next pass's difference.
    const counts = yield* changeCounts
    const pending = (yield* sql`SELECT max(id) AS last,
        (extract(epoch FROM clock_timestamp() - min(requested_at)) * 1000)::float8 AS waited_ms
      FROM store_erasures`.pipe(Effect.flatMap(decodePending)))[0]
    const last = pending?.last ?? null
    if (last === null) {
      since.counts = counts
      return undefined
    }
    if (!quiet && (pending?.waited_ms ?? 0) < Duration.toMillis(ERASE_WITHIN)) return undefined
    const before = since.counts
    const tables = [...counts.keys()].filter((name) => before === undefined || (counts.get(name) ?? 0) !== (before.get(name) ?? 0))
    const started = yield* Clock.currentTimeMillis
    for (const name of tables) yield* sql`VACUUM FULL ${sql(name)}`
    const requests = yield* sql`DELETE FROM store_erasures WHERE id <= ${last} RETURNING what`
    // The log written before now goes: its segment ends here, and the checkpoint removes every segment before it.
    yield* sql`SELECT pg_switch_wal()`
    yield* sql`CHECKPOINT`
    since.counts = counts
    const erased = { requests: requests.length, tables, ms: (yield* Clock.currentTimeMillis) - started }
    yield* Effect.annotateCurrentSpan({ erasure_requests: erased.requests, rewritten: tables.join(","), erase_ms: erased.ms })
    yield* Effect.logInfo(`erased: ${erased.requests} request(s); ${tables.length} table(s) rewritten and the log's older segments removed in ${erased.ms} ms`)
    return erased
  }).pipe(Effect.withSpan("Store.erase"))

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
    const quiet = (yield* growth.quietFor) >= QUIET_MS
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
      vacuumDue(t) && (quiet || t.bytes < SMALL_BYTES || t.dead >= FORCED * vacuumAt(t.live))
    ).map((t) => t.name)
    for (const name of vacuumed) yield* sql`VACUUM ${sql(name)}`
    // Statistics kept current as autovacuum keeps them: the rewrite below judges a table by its rows' width now
    // (a queue's rows emptied after they settle are not judged by the width they had when full).
    const analyzed = tables.filter((t) =>
      analyzeDue(t) && (quiet || t.bytes < SMALL_ANALYZE_BYTES || t.changed >= FORCED * analyzeAt(t.live))
    ).map((t) => t.name)
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
  const compactedAt = new Map<string, number>()
  const since: { counts: Map<string, number> | undefined } = { counts: undefined }
  const pass = Effect.gen(function*() {
    const growth = yield* StoreGrowth
    // Erasure first: its rewrites leave nothing for the ordinary pass to vacuum.
    yield* eraseOnce(since, (yield* growth.quietFor) >= QUIET_MS)
    yield* maintainOnce(compactedAt)
  }).pipe(Effect.provide(context))

  yield* repeatPass(pass, { every: EVERY, doublings: 6, what: "embedded store maintenance", loop: "store-maintenance" })
}))

/**
 * Runs a store pass every `every`, forked in the layer's scope: a failure is
 * logged and the pass tried again, backed off (doubling, at most `doublings`
 * times, never more than 5 minutes apart); an interruption ends it.
 */
const repeatPass = <A>(
  pass: Effect.Effect<A, unknown>,
  options: { readonly every: Duration.Duration; readonly doublings: number; readonly what: string; readonly loop: string }
) =>
  Effect.gen(function*() {
    let failures = 0
    while (true) {
      const exit = yield* Effect.exit(pass)
      if (Exit.isFailure(exit)) {
        if (Cause.isInterruptedOnly(exit.cause)) return
        failures++
        yield* Effect.logWarning(`${options.what} failed (${failures} in a row); trying again`, exit.cause)
      } else failures = 0
      yield* Effect.sleep(Duration.millis(Math.min(300_000, Duration.toMillis(options.every) * 2 ** Math.min(failures, options.doublings))))
    }
  }).pipe(Effect.annotateLogs({ loop: options.loop }), Effect.forkScoped)

/**
 * The tables that hold written text (or what was made of it: words of
 * entities, queued turns, webhook bodies, index snapshots): what a
 * PostgreSQL server's erasure pass vacuums.
 */
const TEXT_TABLES = [
  "memories", "memory_history", "documents", "document_files", "job_files", "memory_models", "memory_model_history",
  "ingest_jobs", "ingest_items", "entities", "entity_edges", "webhook_deliveries", "space_snapshots"
] as const

/** How often a node looks for erasures owed on a PostgreSQL server. */
const SERVER_EVERY = Duration.seconds(15)

/**
 * The erasure pass on a PostgreSQL server (any node, once a request is a few
 * seconds old; two nodes running it at once only vacuum twice): VACUUM of
 * the tables that hold text, so erased rows are pruned and their index
 * entries removed now rather than whenever autovacuum comes, then a
 * CHECKPOINT when the role may run one. It does not rewrite tables (VACUUM
 * FULL would lock a table shared by every node and every organization while
 * it runs): the bytes of pruned rows stay in free space until rows reuse it,
 * and the WAL, its archives, base backups and replicas are the operator's
 * (docs/operations.md, Erasure).
 */
export const serverEraseOnce = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pending = (yield* sql`SELECT max(id) AS last, 0::float8 AS waited_ms FROM store_erasures
    WHERE requested_at < now() - interval '5 seconds'`.pipe(Effect.flatMap(decodePending)))[0]
  const last = pending?.last ?? null
  if (last === null) return undefined
  for (const table of TEXT_TABLES) yield* sql`VACUUM ${sql(table)}`
  const requests = yield* sql`DELETE FROM store_erasures WHERE id <= ${last} RETURNING what`
  const checkpointed = yield* sql`CHECKPOINT`.pipe(Effect.as(true), Effect.catchAll(() => Effect.succeed(false)))
  yield* Effect.annotateCurrentSpan({ erasure_requests: requests.length, checkpointed })
  yield* Effect.logInfo(`erased: ${requests.length} request(s); ${TEXT_TABLES.length} tables vacuumed${checkpointed ? ", checkpointed" : " (CHECKPOINT not permitted for this role)"}`)
  return { requests: requests.length, checkpointed }
}).pipe(Effect.withSpan("Store.erase"))

/** The server profile's erasure loop: supervised like the embedded store's, backed off while it fails. */
export const serverLayer = Layer.scopedDiscard(Effect.gen(function*() {
  const context = yield* Effect.context<SqlClient.SqlClient>()
  const pass = serverEraseOnce.pipe(Effect.provide(context))
  yield* repeatPass(pass, { every: SERVER_EVERY, doublings: 4, what: "erasure pass", loop: "store-erasure" })
}))
