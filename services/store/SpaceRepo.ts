/** Spaces, keyed by (organization, space_id): the same space_id in two organizations is two spaces. */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Conflict } from "../../src/domain/Errors.ts"
import type { Space, SpaceType } from "../../src/domain/Spaces.ts"
import { iso, isUniqueViolation, storeFailure } from "./SqlFailure.ts"

interface SpaceRow {
  readonly space_id: string
  readonly name: string
  readonly space_type: SpaceType
  readonly description: string
  readonly created_at: Date
}

const toSpace = (row: SpaceRow): Space => ({ ...row, created_at: iso(row.created_at) })

export class SpaceRepo extends Effect.Service<SpaceRepo>()("engram/store/SpaceRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: (orgId: string, space: { spaceId: string; name: string; spaceType: SpaceType; description: string; now: Date }) =>
        sql<SpaceRow>`INSERT INTO spaces (org_id, space_id, name, space_type, description, created_at)
          VALUES (${orgId}, ${space.spaceId}, ${space.name}, ${space.spaceType}, ${space.description}, ${space.now})
          RETURNING space_id, name, space_type, description, created_at`.pipe(
          Effect.map((rows) => toSpace(rows[0]!)),
          Effect.catchIf(isUniqueViolation, () => new Conflict({ message: `space ${space.spaceId} already exists` })),
          storeFailure,
          Effect.withSpan("SpaceRepo.create")
        ),

      list: (orgId: string, page: { limit: number; offset: number; spaceType?: SpaceType | undefined }) => {
        const where = page.spaceType === undefined
          ? sql`org_id = ${orgId}`
          : sql`org_id = ${orgId} AND space_type = ${page.spaceType}`
        return Effect.all({
          items: sql<SpaceRow>`SELECT space_id, name, space_type, description, created_at FROM spaces
            WHERE ${where} ORDER BY created_at, space_id LIMIT ${page.limit} OFFSET ${page.offset}`,
          total: sql<{ n: string }>`SELECT count(*) AS n FROM spaces WHERE ${where}`
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items: items.map(toSpace), total: Number(total[0]!.n) })),
          storeFailure
        )
      },

      find: (orgId: string, spaceId: string) =>
        sql<SpaceRow>`SELECT space_id, name, space_type, description, created_at FROM spaces
          WHERE org_id = ${orgId} AND space_id = ${spaceId}`.pipe(
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toSpace))),
          storeFailure
        ),

      /** Whether some other organization holds this space_id (answers 403 rather than 404). */
      heldElsewhere: (orgId: string, spaceId: string) =>
        sql<{ n: string }>`SELECT count(*) AS n FROM spaces WHERE space_id = ${spaceId} AND org_id <> ${orgId}`.pipe(
          Effect.map((rows) => Number(rows[0]!.n) > 0),
          storeFailure
        ),

      /** Deletes the space and, through foreign keys, everything stored in it. */
      delete: (orgId: string, spaceId: string) =>
        sql<{ space_id: string }>`DELETE FROM spaces WHERE org_id = ${orgId} AND space_id = ${spaceId} RETURNING space_id`
          .pipe(Effect.map((rows) => rows.length > 0), storeFailure, Effect.withSpan("SpaceRepo.delete"))
    }
  })
}) {}
