/**
 * Reads of one user's memories for the profile view: only active memories
 * written with that user_id. A fact is consolidated when an active note of
 * the space lists it in source_ids; the collapsed view leaves those facts out.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import type { MemoryType } from "../../src/domain/Memories.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { factsBehindSyntheses, LIST_COLUMNS, MemoryFromRow } from "./MemoryRows.ts"
import { storeFailure } from "./SqlFailure.ts"

/** A memory type, or `collapsed`: every type, with notes standing in for the facts behind them. */
export type ProfileView = MemoryType | "collapsed"

const COLUMNS = LIST_COLUMNS.split(",").map((column) => `m.${column.trim()}`).join(", ")

const decodeSpan = decodeRows(Schema.Struct({ first_seen: Schema.NullOr(Timestamptz), last_active: Schema.NullOr(Timestamptz) }))
const decodeMemories = decodeRows(MemoryFromRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))

export class UserMemoryRepo extends Effect.Service<UserMemoryRepo>()("engram/store/UserMemoryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)
    const viewCondition = (space: SpaceRef, view: ProfileView) => {
      const consolidated = sql`m.id IN ${factsBehindSyntheses(sql, space, "note")}`
      switch (view) {
        case "collapsed":
          return sql`NOT (m.type = 'fact' AND ${consolidated})`
        case "fact":
          return sql`m.type = 'fact' AND NOT ${consolidated}`
        default:
          return sql`m.type = ${view}`
      }
    }

    return {
      /** Record-time span of everything the user has in the space (any type). */
      span: (space: SpaceRef, userId: string) =>
        sql`SELECT min(created_at) AS first_seen, max(created_at) AS last_active FROM memories
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND user_id = ${userId} AND state = 'active'`.pipe(
          Effect.flatMap(decodeSpan),
          Effect.map((rows) => ({
            firstSeen: rows[0]?.first_seen?.toISOString() ?? null,
            lastActive: rows[0]?.last_active?.toISOString() ?? null
          })),
          storeFailure
        ),

      /** One page of the view, newest first, and the view's total. */
      page: (space: SpaceRef, userId: string, view: ProfileView, page: { limit: number; offset: number }) => {
        const where = sql.and([
          sql`m.org_id = ${space.orgId}`,
          sql`m.space_id = ${space.spaceId}`,
          sql`m.user_id = ${userId}`,
          sql`m.state = 'active'`,
          viewCondition(space, view)
        ])
        return Effect.all({
          items: sql`SELECT ${columns} FROM memories m WHERE ${where}
            ORDER BY m.created_at DESC, m.position DESC, m.id LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(
            Effect.flatMap(decodeMemories)
          ),
          total: sql`SELECT count(*) AS n FROM memories m WHERE ${where}`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items, total: total[0]?.n ?? 0 })),
          storeFailure,
          Effect.withSpan("UserMemoryRepo.page", { attributes: { view } })
        )
      }
    }
  })
}) {}
