/**
 * The SQL client in its two shapes: PGlite in-process (embedded default) and a
 * PostgreSQL server. Both run the same SQL through @effect/sql-pg.
 */
import { PGlite } from "@electric-sql/pglite"
import { createPgConfig } from "@electric-sql/pglite/node-postgres"
import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Redacted } from "effect"
import { mkdirSync } from "node:fs"
import Pg from "pg"

/**
 * PostgreSQL's own defaults size shared buffers for a server (128 MB), and
 * PGlite keeps them in its WASM heap. 16 MB keeps the embedded store about
 * 150 MB smaller (bench:footprint) while the operating system's page cache
 * still holds the data files. Measured (docs/footprint.md): bench:footprint's
 * retrieve p95 did not suffer; bench:locomo's was 22.5 ms against 17.5 ms at
 * 128 MB, run back to back on a machine whose figures vary that much between runs.
 */
const EMBEDDED_SETTINGS = ["-c", "shared_buffers=16MB", "-c", "wal_buffers=1MB"]

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
          if (!options.dataDir.startsWith("memory://")) mkdirSync(options.dataDir, { recursive: true })
          const pglite = await PGlite.create(options.dataDir, {
            ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
            startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS]
          })
          const pool = new Pg.Pool({ ...createPgConfig(pglite), max: 1 } as Pg.PoolConfig)
          return { pglite, pool }
        },
        catch: (cause) => new SqlError({ cause, message: `cannot open the embedded store at ${options.dataDir}` })
      }),
      ({ pglite, pool }) => Effect.promise(() => pool.end().then(() => pglite.close())).pipe(Effect.ignore)
    ).pipe(Effect.map(({ pool }) => pool)),
    applicationName: "engram"
  })

/** A PostgreSQL server. Start-up fails if it cannot be reached: no fallback. */
export const layerPostgres = (url: Redacted.Redacted, maxConnections = 10) =>
  PgClient.layer({
    url,
    maxConnections,
    connectTimeout: Duration.seconds(5),
    applicationName: "engram"
  })
