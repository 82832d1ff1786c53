/**
 * The SQL client in its two shapes: PGlite in-process (embedded default) and a
 * PostgreSQL server. Both run the same SQL through @effect/sql-pg.
 */
import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Redacted } from "effect"
import { mkdirSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import Pg from "pg"
import { pgliteConfig } from "./PgliteConnection.ts"

/**
 * PostgreSQL's own defaults size shared buffers for a server (128 MB), and
 * PGlite keeps them in its WASM heap. 16 MB keeps the embedded store about
 * 150 MB smaller (bench:footprint) while the operating system's page cache
 * still holds the data files. Measured (docs/footprint.md): bench:footprint's
 * retrieve p95 did not suffer; bench:locomo's was 22.5 ms against 17.5 ms at
 * 128 MB, run back to back on a machine whose figures vary that much between runs.
 *
 * Statistics come from 6,000 sampled rows, not 30,000: PGlite runs ANALYZE
 * on the event loop and keeps the memory it took. On bench:real's memories
 * table (100,870 rows): 142 ms and no growth, against 553 ms and 37 MB of
 * WASM heap kept for good, with the same plans for the space's queries.
 */
const EMBEDDED_SETTINGS = ["-c", "shared_buffers=16MB", "-c", "wal_buffers=1MB", "-c", "default_statistics_target=20"]

/**
 * The write-ahead log of the embedded store, kept small. PGlite runs
 * PostgreSQL in single-user mode: there is no checkpointer, so nothing but
 * an explicit CHECKPOINT (StoreMaintenance) ends a WAL segment's use, and
 * with the defaults (16 MB segments, 80 MB kept for reuse, 1 GB between
 * checkpoints) a node's DATA_DIR held 352 MB of WAL for 18 MB of text
 * (bench:real). A new data directory gets 1 MB segments (initdb's
 * --wal-segsize); old segments are removed, not kept for reuse; full-page
 * images are compressed. A directory made with 16 MB segments keeps them:
 * the minimum sizes are then two of its segments, as PostgreSQL requires.
 */
const WAL_SEGMENT_INITDB = ["--wal-segsize=1"]
const walSettings = (segmentBytes: number) => [
  "-c", "wal_recycle=off",
  "-c", "wal_compression=on",
  "-c", `min_wal_size=${2 * Math.max(1, segmentBytes >> 20)}MB`,
  "-c", `max_wal_size=${Math.max(16, 4 * (segmentBytes >> 20))}MB`
]

/** The WAL segment size of an existing data directory (its segment files' size), or 1 MB for a new one. */
const segmentSize = (dataDir: string) => {
  try {
    const wal = join(dataDir, "pg_wal")
    for (const name of readdirSync(wal)) if (/^[0-9A-F]{24}$/.test(name)) return statSync(join(wal, name)).size
  } catch {
    // a directory not made yet
  }
  return 1 << 20
}

/**
 * template0 and template1 serve only CREATE DATABASE, which the embedded
 * store never runs: 15 MB of a fresh DATA_DIR's 29 MB. They are dropped once.
 */
const dropTemplateDatabases = async (pglite: PGlite) => {
  const found = await pglite.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname IN ('template0', 'template1')`)
  for (const { datname } of found.rows) {
    await pglite.query(`UPDATE pg_database SET datistemplate = false WHERE datname = '${datname}'`)
    await pglite.query(`DROP DATABASE ${datname}`)
  }
}

/**
 * PGlite behind node-postgres with a pool of exactly one connection: PGlite is
 * single-session, so every query must go through the same connection.
 * `dataDir` is a directory, or `memory://` for a throwaway database.
 */
export const layerPglite = (options: { readonly dataDir: string; readonly loadDataDir?: Blob | undefined }) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const inMemory = options.dataDir.startsWith("memory://")
          if (!inMemory) mkdirSync(options.dataDir, { recursive: true })
          // A template seeded into a new directory was itself made with 1 MB segments (scripts/prepare.ts).
          const segment = inMemory || options.loadDataDir !== undefined ? 1 << 20 : segmentSize(options.dataDir)
          const pglite = await PGlite.create(options.dataDir, {
            ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
            initDbStartParams: WAL_SEGMENT_INITDB,
            startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS, ...walSettings(segment)]
          })
          await dropTemplateDatabases(pglite)
          const pool = new Pg.Pool({ ...pgliteConfig(pglite), max: 1 })
          return { pglite, pool }
        },
        catch: (cause) => new SqlError({ cause, message: `cannot open the embedded store at ${options.dataDir}` })
      }),
      ({ pglite, pool }) => Effect.promise(() => pool.end().then(() => pglite.close())).pipe(Effect.ignore)
    ).pipe(Effect.map(({ pool }) => pool)),
    applicationName: "engram"
  })

/** What @effect/sql-pg runs, on another pooled connection, to cancel an interrupted fiber's statement. */
const CANCEL = /^SELECT pg_cancel_backend\((\d+)\)$/

/**
 * A pool whose cancels of interrupted statements can never reach another
 * statement. @effect/sql-pg cancels an interrupted fiber's statement with
 * `pg_cancel_backend(pid)`, run on another connection of the same pool, so
 * behind any statements queued for one; meanwhile the interrupted statement
 * can end and its connection go back to the pool, and the cancel then lands
 * on whichever request's statement that backend runs next (57014, seen in CI
 * and reproduced by test/store/CancelSafety.test.ts: bursts of interrupts
 * with other statements running cancelled about one of them per burst).
 * Here no signal is sent: the connection of an interrupted statement still
 * out of the pool is closed when it is released instead of being reused, so
 * no one waits behind the statement, which runs to its end on its own
 * backend. A connection already back in the pool had finished its statement
 * and is left alone.
 */
const makePool = (url: string, max: number) => {
  const pool = new Pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000, application_name: "engram" })
  // An idle connection's error removes it from the pool; nothing else is owed (as @effect/sql-pg does).
  pool.on("error", () => undefined)
  const byPid = new Map<number, Pg.PoolClient>()
  const out = new Set<Pg.PoolClient>()
  const pidOf = (client: Pg.PoolClient) => {
    const pid: unknown = Reflect.get(client, "processID")
    return typeof pid === "number" ? pid : undefined
  }
  pool.on("connect", (client) => {
    const pid = pidOf(client)
    if (pid !== undefined) byPid.set(pid, client)
  })
  pool.on("remove", (client) => {
    const pid = pidOf(client)
    if (pid !== undefined && byPid.get(pid) === client) byPid.delete(pid)
    out.delete(client)
  })
  pool.on("acquire", (client) => out.add(client))
  pool.on("release", (_error, client) => out.delete(client))
  const retire = (client: Pg.PoolClient) => {
    const release = client.release
    client.release = (error?: Error | boolean) => release(error === undefined || error === false ? true : error)
  }
  const query: unknown = pool.query
  Object.defineProperty(pool, "query", {
    value: (...args: Array<unknown>) => {
      const cancelled = typeof args[0] === "string" ? CANCEL.exec(args[0])?.[1] : undefined
      if (cancelled === undefined) return typeof query === "function" ? Reflect.apply(query, pool, args) : undefined
      const client = byPid.get(Number(cancelled))
      if (client !== undefined && out.has(client)) retire(client)
      const done = args[args.length - 1]
      if (typeof done === "function") process.nextTick(() => Reflect.apply(done, undefined, [null, { rows: [] }]))
      return undefined
    }
  })
  return pool
}

/** A PostgreSQL server. Start-up fails if it cannot be reached: no fallback. */
export const layerPostgres = (url: Redacted.Redacted, maxConnections = 10) =>
  PgClient.layerFromPool({
    acquire: Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const pool = makePool(Redacted.value(url), maxConnections)
          try {
            await pool.query("SELECT 1")
          } catch (cause) {
            await pool.end().catch(() => undefined)
            throw cause
          }
          return pool
        },
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(5),
          onTimeout: () => new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        })
      ),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
    ),
    applicationName: "engram"
  })
