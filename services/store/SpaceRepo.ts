/** Spaces, keyed by (organization, space_id): the same space_id in two organizations is two spaces. */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Conflict, NotFound } from "../../src/domain/Errors.ts"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { type Space, SpaceType } from "../../src/domain/Spaces.ts"
import { randomBase62 } from "../secrets/Tokens.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { isForeignKeyViolation, isUniqueViolation, storeFailure } from "./SqlFailure.ts"
import { noteErasure } from "./Erasures.ts"

const SpaceRow = Schema.Struct({
  space_id: Schema.String,
  name: Schema.String,
  space_type: SpaceType,
  description: Schema.String,
  project_id: Schema.NullOr(Schema.String),
  created_at: Timestamptz
})
const ListedRow = Schema.Struct({ ...SpaceRow.fields, shared: Schema.Boolean })

const toSpace = (row: typeof SpaceRow.Type, shared = false): Space => ({
  space_id: row.space_id,
  name: row.name,
  space_type: row.space_type,
  description: row.description,
  project_id: shared ? null : row.project_id,
  created_at: row.created_at.toISOString(),
  shared
})

const decodeSpaces = decodeRows(SpaceRow)
const decodeListed = decodeRows(ListedRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))

export class SpaceRepo extends Effect.Service<SpaceRepo>()("engram/store/SpaceRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const COLUMNS = sql.literal("space_id, name, space_type, description, project_id, created_at")
    return {
      create: (orgId: string, space: {
        spaceId: string
        name: string
        spaceType: SpaceType
        description: string
        projectId?: string | undefined
        now: Date
      }) =>
        // A new space starts with one rule: API keys are redacted (its owner may remove it).
        sql`WITH created AS (
            INSERT INTO spaces (org_id, space_id, name, space_type, description, project_id, created_at)
            VALUES (${orgId}, ${space.spaceId}, ${space.name}, ${space.spaceType}, ${space.description}, ${space.projectId ?? null}, ${space.now})
            RETURNING ${COLUMNS}
          ), rule AS (
            INSERT INTO space_rules (org_id, space_id, rule_id, name, detector, pattern, action, enabled, created_at)
            SELECT ${orgId}, space_id, ${`rul_${randomBase62(16)}`}, 'Redact API keys', 'api_key', NULL, 'redact', true, created_at
            FROM created
          )
          SELECT ${COLUMNS} FROM created`.pipe(
          Effect.flatMap(decodeSpaces),
          Effect.map((rows) => toSpace(rows[0]!)),
          Effect.catchTag("SqlError", (error): Effect.Effect<never, Conflict | NotFound | SqlError> =>
            isUniqueViolation(error)
              ? Effect.fail(new Conflict({ message: `space ${space.spaceId} already exists` }))
              : isForeignKeyViolation(error)
              ? Effect.fail(new NotFound({ message: `project ${space.projectId} not found` }))
              : Effect.fail(error)),
          storeFailure,
          Effect.withSpan("SpaceRepo.create")
        ),

      count: (orgId: string) =>
        sql`SELECT count(*) AS n FROM spaces WHERE org_id = ${orgId}`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => rows[0]?.n ?? 0),
          storeFailure
        ),

      /**
       * The organization's spaces and, unless a project is asked for (projects
       * are the owner's), the spaces other organizations share with it.
       */
      list: (orgId: string, page: { limit: number; offset: number; spaceType?: SpaceType | undefined; projectId?: string | undefined }) => {
        const typed = page.spaceType === undefined ? [] : [sql`s.space_type = ${page.spaceType}`]
        const own = sql`SELECT s.space_id, s.name, s.space_type, s.description, s.project_id, s.created_at, false AS shared
          FROM spaces s WHERE ${sql.and([
          sql`s.org_id = ${orgId}`,
          ...typed,
          ...(page.projectId === undefined ? [] : [sql`s.project_id = ${page.projectId}`])
        ])}`
        const shared = sql`SELECT s.space_id, s.name, s.space_type, s.description, s.project_id, s.created_at, true AS shared
          FROM space_members m JOIN spaces s ON s.org_id = m.org_id AND s.space_id = m.space_id
          WHERE ${sql.and([sql`m.member_org_id = ${orgId}`, ...typed])}`
        const all = page.projectId === undefined ? sql`${own} UNION ALL ${shared}` : own
        return Effect.all({
          items: sql`SELECT * FROM (${all}) listed
            ORDER BY created_at, space_id, shared LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(Effect.flatMap(decodeListed)),
          total: sql`SELECT count(*) AS n FROM (${all}) listed`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items: items.map((row) => toSpace(row, row.shared)), total: total[0]?.n ?? 0 })),
          storeFailure
        )
      },

      /** A space another organization shares with this one, as the member sees it. */
      findShared: (memberOrgId: string, spaceId: string) =>
        sql`SELECT s.space_id, s.name, s.space_type, s.description, s.project_id, s.created_at
          FROM space_members m JOIN spaces s ON s.org_id = m.org_id AND s.space_id = m.space_id
          WHERE m.member_org_id = ${memberOrgId} AND m.space_id = ${spaceId}
          ORDER BY m.added_at, m.org_id LIMIT 1`.pipe(
          Effect.flatMap(decodeSpaces),
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((row) => toSpace(row, true)))),
          storeFailure
        ),

      find: (orgId: string, spaceId: string) =>
        sql`SELECT ${COLUMNS} FROM spaces
          WHERE org_id = ${orgId} AND space_id = ${spaceId}`.pipe(
          Effect.flatMap(decodeSpaces),
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toSpace))),
          storeFailure
        ),

      /** Whether some other organization holds this space_id (answers 403 rather than 404). */
      heldElsewhere: (orgId: string, spaceId: string) =>
        sql`SELECT count(*) AS n FROM spaces WHERE space_id = ${spaceId} AND org_id <> ${orgId}`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
          storeFailure
        ),

      /** Whether the space exists (its entity checks before serving it). */
      exists: (space: SpaceRef) =>
        sql`SELECT count(*) AS n FROM spaces WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
          storeFailure
        ),

      /** Deletes the space and, through foreign keys, everything stored in it. Run it inside a transaction. */
      delete: (space: SpaceRef) =>
        sql`DELETE FROM spaces WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} RETURNING space_id`.pipe(
          Effect.flatMap(decodeRows(Schema.Struct({ space_id: Schema.String }))),
          Effect.tap((rows) => rows.length === 0 ? Effect.void : noteErasure(sql, "space")),
          Effect.map((rows) => rows.length > 0),
          Effect.withSpan("SpaceRepo.delete")
        )
    }
  })
}) {}
