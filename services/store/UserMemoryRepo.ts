/**
 * Reads of one user's memories for the profile view: only active memories
 * written with that user_id. A fact is consolidated when an active note of
 * the space lists it in source_ids; the collapsed view leaves those facts out.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MemoryState, MemoryType } from "../../src/domain/Memories.ts"
import type { ProfileMemory } from "../../src/domain/Profiles.ts"
import { iso, isoOrNull, storeFailure } from "./SqlFailure.ts"

interface UserMemoryRow {
  readonly id: string
  readonly document_id: string
  readonly text: string
  readonly context: string
  readonly type: MemoryType
  readonly state: MemoryState
  readonly entities: ReadonlyArray<{ readonly name: string }>
  readonly metadata: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly user_id: string | null
  readonly agent_id: string | null
  readonly session_id: string | null
  readonly member_id: string | null
  readonly event_time: Date
  readonly occurred_start: Date | null
  readonly occurred_end: Date | null
  readonly source_ids: ReadonlyArray<string>
  readonly created_at: Date
  readonly updated_at: Date
}

/** A memory type, or `collapsed`: every type, with notes standing in for the facts behind them. */
export type ProfileView = MemoryType | "collapsed"

const COLUMNS = `m.id, m.document_id, m.text, m.context, m.type, m.state, m.entities, m.metadata, m.tags, m.user_id,
  m.agent_id, m.session_id, m.member_id, m.event_time, m.occurred_start, m.occurred_end, m.source_ids,
  m.created_at, m.updated_at`

export const toProfileMemory = (row: UserMemoryRow): ProfileMemory => ({
  id: row.id,
  text: row.text,
  context: row.context,
  date: iso(row.event_time),
  type: row.type,
  state: row.state,
  entities: row.entities.map((e) => e.name).join(", "),
  metadata: row.metadata,
  tags: [...row.tags],
  source_ids: [...row.source_ids],
  document_id: row.document_id,
  user_id: row.user_id,
  agent_id: row.agent_id,
  session_id: row.session_id,
  member_id: row.member_id,
  occurred_start: isoOrNull(row.occurred_start),
  occurred_end: isoOrNull(row.occurred_end),
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at)
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
          items: sql<UserMemoryRow>`SELECT ${columns} FROM memories m WHERE ${where}
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
