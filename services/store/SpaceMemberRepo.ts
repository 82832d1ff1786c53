/**
 * Organizations a space is shared with, and the access each has. Read from
 * the store on every shared request, so adding or removing a member takes
 * effect at once on every node.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

export const SpaceAccess = Schema.Literal("read", "write")
export type SpaceAccess = typeof SpaceAccess.Type

const MemberRow = Schema.Struct({
  member_org_id: Schema.String,
  name: Schema.String,
  access: SpaceAccess,
  added_at: Timestamptz
})
export type MemberRow = typeof MemberRow.Type

const AccessRow = Schema.Struct({
  org_id: Schema.String,
  access: SpaceAccess,
  owner_has_key: Schema.Boolean
})

const decodeMembers = decodeRows(MemberRow)
const decodeAccess = decodeRows(AccessRow)
const decodeRemoved = decodeRows(Schema.Struct({ member_org_id: Schema.String }))

export class SpaceMemberRepo extends Effect.Service<SpaceMemberRepo>()("engram/store/SpaceMemberRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      list: (space: SpaceRef) =>
        sql`SELECT m.member_org_id, o.name, m.access, m.added_at
          FROM space_members m JOIN organizations o ON o.id = m.member_org_id
          WHERE m.org_id = ${space.orgId} AND m.space_id = ${space.spaceId}
          ORDER BY m.added_at, m.member_org_id`.pipe(Effect.flatMap(decodeMembers), storeFailure),

      /** Adds the organization, or sets its access when it is a member already. */
      put: (space: SpaceRef, memberOrgId: string, access: SpaceAccess, now: Date) =>
        sql`WITH put AS (
            INSERT INTO space_members (org_id, space_id, member_org_id, access, added_at)
            VALUES (${space.orgId}, ${space.spaceId}, ${memberOrgId}, ${access}, ${now})
            ON CONFLICT (org_id, space_id, member_org_id) DO UPDATE SET access = EXCLUDED.access
            RETURNING member_org_id, access, added_at
          )
          SELECT put.member_org_id, o.name, put.access, put.added_at
          FROM put JOIN organizations o ON o.id = put.member_org_id`.pipe(
          Effect.flatMap(decodeMembers),
          Effect.map((rows) => rows[0]!),
          storeFailure
        ),

      remove: (space: SpaceRef, memberOrgId: string) =>
        sql`DELETE FROM space_members
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND member_org_id = ${memberOrgId}
          RETURNING member_org_id`.pipe(
          Effect.flatMap(decodeRemoved),
          Effect.map((rows) => rows.length > 0),
          storeFailure
        ),

      /**
       * The caller's access to a space another organization shares with it,
       * and whether that owner still holds an active key (the space is
       * unavailable otherwise). The oldest share wins should two owners share
       * spaces of the same id.
       */
      accessFor: (memberOrgId: string, spaceId: string, now: Date) =>
        sql`SELECT m.org_id, m.access,
            EXISTS (
              SELECT 1 FROM api_keys k
              WHERE k.org_id = m.org_id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ${now})
            ) AS owner_has_key
          FROM space_members m
          WHERE m.member_org_id = ${memberOrgId} AND m.space_id = ${spaceId}
          ORDER BY m.added_at, m.org_id LIMIT 1`.pipe(
          Effect.flatMap(decodeAccess),
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        )
    }
  })
}) {}
