/**
 * Reads of one user's memories for the profile view: only active memories
 * written with that user_id. A fact is consolidated when an active note of
 * the space lists it in source_ids; the collapsed view leaves those facts out.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MemoryType } from "../../src/domain/Memories.ts"
import type { ProfileMemory } from "../../src/domain/Profiles.ts"
import { type ListedRow, toMemoryItem } from "./MemoryRepo.ts"
import { isoOrNull, storeFailure } from "./SqlFailure.ts"

/** A memory type, or `collapsed`: every type, with notes standing in for the facts behind them. */
export type ProfileView = MemoryType | "collapsed"

const COLUMNS = `m.id, m.document_id, m.text, m.context, m.type, m.state, m.entities, m.metadata, m.tags, m.user_id,
  m.agent_id, m.session_id, m.member_id, m.event_time, m.occurred_start, m.occurred_end, m.source_ids,
  m.created_at, m.updated_at`

export const toProfileMemory = (row: ListedRow): ProfileMemory => ({
  ...toMemoryItem(row),
  entities: row.entities.map((e) => e.name).join(", ")
})

export class UserMemoryRepo extends Effect.Service<UserMemoryRepo>()("engram/store/UserMemoryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)
    const consolidated = sql`EXISTS (SELECT 1 FROM memories n WHERE n.org_id = m.org_id AND n.space_id = m.space_id
      AND n.type = 'note' AND n.state = 'active' AND m.id = ANY(n.source_ids))`

    const viewCondition = (view: ProfileView) => {
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
      span: (orgId: string, spaceId: string, userId: string) =>
        sql<{ first_seen: Date | null; last_active: Date | null }>`
          SELECT min(created_at) AS first_seen, max(created_at) AS last_active FROM memories
          WHERE org_id = ${orgId} AND space_id = ${spaceId} AND user_id = ${userId} AND state = 'active'`.pipe(
          Effect.map((rows) => ({
            firstSeen: isoOrNull(rows[0]?.first_seen ?? null),
            lastActive: isoOrNull(rows[0]?.last_active ?? null)
          })),
          storeFailure
        ),

      /** One page of the view, newest first, and the view's total. */
      page: (orgId: string, spaceId: string, userId: string, view: ProfileView, page: { limit: number; offset: number }) => {
        const where = sql.and([
          sql`m.org_id = ${orgId}`,
          sql`m.space_id = ${spaceId}`,
          sql`m.user_id = ${userId}`,
          sql`m.state = 'active'`,
          viewCondition(view)
        ])
        return Effect.all({
          items: sql<ListedRow>`SELECT ${columns} FROM memories m WHERE ${where}
            ORDER BY m.created_at DESC, m.position DESC, m.id LIMIT ${page.limit} OFFSET ${page.offset}`,
          total: sql<{ n: string }>`SELECT count(*) AS n FROM memories m WHERE ${where}`
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items: items.map(toProfileMemory), total: Number(total[0]!.n) })),
          storeFailure,
          Effect.withSpan("UserMemoryRepo.page", { attributes: { view } })
        )
      }
    }
  })
}) {}
