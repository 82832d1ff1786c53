/**
 * Where snapshots of space indexes are kept. A snapshot is a cache of the
 * store: losing one costs a rebuild, so a snapshot that cannot be read is
 * reported and treated as missing, and one that cannot be written is
 * reported and skipped. Three places: files under DATA_DIR (the embedded
 * profile), the `space_snapshots` table (the server profile, so whichever
 * node a space moves to finds it), and memory (a store in memory).
 */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { Bytea, decodeRows } from "./Columns.ts"
import { isForeignKeyViolation } from "./SqlFailure.ts"

export interface SnapshotStoreShape {
  /** Where snapshots are kept, for logs. */
  readonly describe: string
  readonly read: (space: SpaceRef) => Effect.Effect<Option.Option<Uint8Array>>
  readonly write: (space: SpaceRef, bytes: Uint8Array) => Effect.Effect<void>
  readonly remove: (space: SpaceRef) => Effect.Effect<void>
}

export class SnapshotStore extends Context.Tag("engram/store/SnapshotStore")<SnapshotStore, SnapshotStoreShape>() {}

const reported = (what: string, space: SpaceRef) => <A>(effect: Effect.Effect<A, unknown>, fallback: A) =>
  effect.pipe(
    Effect.catchAll((cause) =>
      Effect.logWarning(`${what} the index snapshot failed; the index is rebuilt from the store when needed`, cause).pipe(
        Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId }),
        Effect.as(fallback)
      )
    )
  )

/** A file per space under `directory`, named by a digest of the space (ids may hold any character). */
export const layerFiles = (directory: string) =>
  Layer.succeed(SnapshotStore, {
    describe: `files under ${directory}`,
    read: (space) =>
      reported("reading", space)(
        Effect.tryPromise(() => readFile(fileOf(directory, space))).pipe(
          Effect.map((bytes) => Option.some<Uint8Array>(bytes)),
          Effect.catchIf((e) => isMissing(e), () => Effect.succeed(Option.none<Uint8Array>()))
        ),
        Option.none()
      ),
    write: (space, bytes) =>
      reported("writing", space)(
        Effect.tryPromise(async () => {
          await mkdir(directory, { recursive: true })
          const file = fileOf(directory, space)
          // Written aside, then renamed over the old one: a crash leaves the old snapshot or the new, never half of one.
          const temporary = `${file}.${process.pid}.tmp`
          await writeFile(temporary, bytes)
          await rename(temporary, file)
        }),
        undefined
      ),
    remove: (space) => reported("removing", space)(Effect.tryPromise(() => rm(fileOf(directory, space), { force: true })), undefined)
  })

const fileOf = (directory: string, space: SpaceRef) =>
  join(directory, `${createHash("sha256").update(`${space.orgId}\u0000${space.spaceId}`).digest("hex").slice(0, 32)}.snap`)

const isMissing = (error: unknown) => {
  const cause = error instanceof Error && "cause" in error ? error.cause : error
  return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "ENOENT"
}

const decodeData = decodeRows(Schema.Struct({ data: Bytea }))

/** The `space_snapshots` table of the shared store. */
export const layerStore = Layer.effect(
  SnapshotStore,
  Effect.map(SqlClient.SqlClient, (sql): SnapshotStoreShape => ({
    describe: "the store (space_snapshots)",
    read: (space) =>
      reported("reading", space)(
        sql`SELECT data FROM space_snapshots WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`.pipe(
          Effect.flatMap(decodeData),
          Effect.map((rows) => Option.fromNullable(rows[0]?.data))
        ),
        Option.none()
      ),
    write: (space, bytes) =>
      reported("writing", space)(
        sql`INSERT INTO space_snapshots (org_id, space_id, data, written_at)
          VALUES (${space.orgId}, ${space.spaceId}, ${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)}, now())
          ON CONFLICT (org_id, space_id) DO UPDATE SET data = EXCLUDED.data, written_at = EXCLUDED.written_at`.pipe(
          // A space deleted meanwhile has nothing to keep a snapshot for.
          Effect.catchTag("SqlError", (e) => (isForeignKeyViolation(e) ? Effect.void : Effect.fail(e))),
          Effect.asVoid
        ),
        undefined
      ),
    remove: (space) =>
      reported("removing", space)(
        sql`DELETE FROM space_snapshots WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`.pipe(Effect.asVoid),
        undefined
      )
  }))
)

/** In memory, for a store that is in memory itself. */
export const layerMemory = Layer.sync(SnapshotStore, (): SnapshotStoreShape => {
  const kept = new Map<string, Uint8Array>()
  const key = (space: SpaceRef) => `${space.orgId}\u0000${space.spaceId}`
  return {
    describe: "memory",
    read: (space) => Effect.sync(() => Option.fromNullable(kept.get(key(space)))),
    write: (space, bytes) => Effect.sync(() => void kept.set(key(space), Uint8Array.from(bytes))),
    remove: (space) => Effect.sync(() => void kept.delete(key(space)))
  }
})
