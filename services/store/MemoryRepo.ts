/**
 * Memories, their documents and history. Every statement names the
 * organization and space; the Space entity is the only writer of a space.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { MemoryListQuery, MemoryState, MemoryType } from "../../src/domain/Memories.ts"
import { iso, isoOrNull, storeFailure } from "./SqlFailure.ts"

export interface EntityRef {
  readonly name: string
  readonly kind: string
}

export interface MemoryRow {
  readonly id: string
  readonly org_id: string
  readonly space_id: string
  readonly document_id: string
  readonly text: string
  readonly source_text: string
  readonly context: string
  readonly type: MemoryType
  readonly state: MemoryState
  readonly entities: ReadonlyArray<EntityRef>
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
  readonly position: number
  readonly embedding: Uint8Array | null
  readonly embedder: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export interface NewMemory {
  readonly id: string
  readonly text: string
  readonly sourceText: string
  readonly context: string
  readonly type: MemoryType
  readonly entities: ReadonlyArray<EntityRef>
  readonly metadata: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly userId: string | null
  readonly agentId: string | null
  readonly sessionId: string | null
  readonly memberId: string | null
  readonly eventTime: Date
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly position: number
  readonly embedding: Float32Array | null
  readonly embedder: string | null
}

export interface DocumentWrite {
  readonly documentId: string
  readonly source: "custom" | "memory" | "file"
  readonly textLength: number
  readonly tags: ReadonlyArray<string>
}

const COLUMNS = `id, org_id, space_id, document_id, text, source_text, context, type, state, entities, metadata, tags,
  user_id, agent_id, session_id, member_id, event_time, occurred_start, occurred_end, source_ids, position,
  embedding, embedder, created_at, updated_at`

export const vectorToBytes = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)
export const bytesToVector = (bytes: Uint8Array) => {
  const copy = new Uint8Array(bytes)
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4))
}

export const toMemoryItem = (row: MemoryRow) => ({
  id: row.id,
  text: row.text,
  context: row.context,
  date: iso(row.event_time),
  type: row.type,
  state: row.state,
  entities: row.entities.map((e) => e.name),
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

export class MemoryRepo extends Effect.Service<MemoryRepo>()("engram/store/MemoryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    /**
     * Stores a write's memories under its document. Reusing a caller's
     * document_id replaces that document's memories; answers the ids replaced.
     */
    const insertDocument = (orgId: string, spaceId: string, doc: DocumentWrite, memories: ReadonlyArray<NewMemory>, now: Date) =>
      Effect.gen(function*() {
        const replaced = yield* sql<{ id: string }>`DELETE FROM memories
          WHERE org_id = ${orgId} AND space_id = ${spaceId} AND document_id = ${doc.documentId} RETURNING id`
        yield* sql`INSERT INTO documents (org_id, space_id, document_id, source, text_length, tags, created_at, updated_at)
          VALUES (${orgId}, ${spaceId}, ${doc.documentId}, ${doc.source}, ${doc.textLength}, ${doc.tags as Array<string>}, ${now}, ${now})
          ON CONFLICT (org_id, space_id, document_id) DO UPDATE
          SET text_length = EXCLUDED.text_length, tags = EXCLUDED.tags, updated_at = EXCLUDED.updated_at`
        const rows: Array<MemoryRow> = []
        for (const m of memories) {
          const inserted = yield* sql<MemoryRow>`INSERT INTO memories (id, org_id, space_id, document_id, text, source_text,
              context, type, entities, metadata, tags, user_id, agent_id, session_id, member_id, event_time,
              occurred_start, occurred_end, position, embedding, embedder, created_at, updated_at)
            VALUES (${m.id}, ${orgId}, ${spaceId}, ${doc.documentId}, ${m.text}, ${m.sourceText}, ${m.context}, ${m.type},
              ${JSON.stringify(m.entities)}::jsonb, ${JSON.stringify(m.metadata)}::jsonb, ${m.tags as Array<string>},
              ${m.userId}, ${m.agentId}, ${m.sessionId}, ${m.memberId}, ${m.eventTime}, ${m.occurredStart},
              ${m.occurredEnd}, ${m.position}, ${m.embedding ? vectorToBytes(m.embedding) : null}, ${m.embedder},
              ${now}, ${now})
            RETURNING ${columns}`
          rows.push(inserted[0]!)
          yield* sql`INSERT INTO memory_history (memory_id, change, previous, changed_at) VALUES (${m.id}, 'created', NULL, ${now})`
        }
        return { rows, replaced: replaced.map((r) => r.id) }
      })

    return {
      insertDocument: (orgId: string, spaceId: string, doc: DocumentWrite, memories: ReadonlyArray<NewMemory>, now: Date) =>
        insertDocument(orgId, spaceId, doc, memories, now).pipe(sql.withTransaction, storeFailure, Effect.withSpan("MemoryRepo.insertDocument")),

      /** Same as insertDocument, inside a caller's transaction (queued items mark themselves done in it). */
      insertDocumentInTransaction: insertDocument,

      withTransaction: sql.withTransaction,

      /** Every memory of a space, for building its index. */
      loadSpace: (orgId: string, spaceId: string) =>
        sql<MemoryRow>`SELECT ${columns} FROM memories WHERE org_id = ${orgId} AND space_id = ${spaceId}
          ORDER BY created_at, id`.pipe(storeFailure, Effect.withSpan("MemoryRepo.loadSpace")),

      find: (orgId: string, spaceId: string, id: string) =>
        sql<MemoryRow>`SELECT ${columns} FROM memories WHERE org_id = ${orgId} AND space_id = ${spaceId} AND id = ${id}`.pipe(
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        ),

      list: (orgId: string, spaceId: string, query: MemoryListQuery, hiddenIds: ReadonlyArray<string>) => {
        const conditions = [sql`org_id = ${orgId}`, sql`space_id = ${spaceId}`]
        const state = query.state ?? "active"
        if (state !== "all") conditions.push(sql`state = ${state}`)
        if (query.type !== undefined) conditions.push(sql`type = ${query.type}`)
        if (query.user_id !== undefined) conditions.push(sql`user_id = ${query.user_id}`)
        if (query.agent_id !== undefined) conditions.push(sql`agent_id = ${query.agent_id}`)
        if (query.session_id !== undefined) conditions.push(sql`session_id = ${query.session_id}`)
        if (query.document_id !== undefined) conditions.push(sql`document_id = ${query.document_id}`)
        if (query.q !== undefined && query.q.trim() !== "") {
          conditions.push(sql`strpos(lower(text), ${query.q.trim().toLowerCase()}) > 0`)
        }
        if (hiddenIds.length > 0) conditions.push(sql`NOT (id = ANY(${hiddenIds as Array<string>}))`)
        const where = sql.and(conditions)
        return Effect.all({
          items: sql<MemoryRow>`SELECT ${columns} FROM memories WHERE ${where}
            ORDER BY created_at DESC, position DESC, id LIMIT ${query.limit} OFFSET ${query.offset}`,
          total: sql<{ n: string }>`SELECT count(*) AS n FROM memories WHERE ${where}`
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items, total: Number(total[0]!.n) })),
          storeFailure
        )
      },

      update: (
        row: MemoryRow,
        change: { text: string; context: string; metadata: Record<string, unknown>; tags: ReadonlyArray<string>; state: MemoryState },
        kind: "edited" | "retired" | "restored",
        now: Date
      ) =>
        Effect.gen(function*() {
          const previous = { text: row.text, context: row.context, metadata: row.metadata, tags: row.tags, state: row.state }
          yield* sql`INSERT INTO memory_history (memory_id, change, previous, changed_at)
            VALUES (${row.id}, ${kind}, ${JSON.stringify(previous)}::jsonb, ${now})`
          const rows = yield* sql<MemoryRow>`UPDATE memories SET text = ${change.text}, context = ${change.context},
              metadata = ${JSON.stringify(change.metadata)}::jsonb, tags = ${change.tags as Array<string>},
              state = ${change.state}, updated_at = ${now},
              embedding = CASE WHEN ${change.text} = text THEN embedding ELSE NULL END,
              embedder = CASE WHEN ${change.text} = text THEN embedder ELSE NULL END
            WHERE id = ${row.id} RETURNING ${columns}`
          return rows[0]!
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("MemoryRepo.update")),

      delete: (orgId: string, spaceId: string, id: string) =>
        sql<{ id: string }>`DELETE FROM memories WHERE org_id = ${orgId} AND space_id = ${spaceId} AND id = ${id} RETURNING id`
          .pipe(Effect.map((rows) => rows.length > 0), storeFailure),

      history: (id: string) =>
        sql<{ change: "created" | "edited" | "retired" | "restored"; previous: any; changed_at: Date }>`
          SELECT change, previous, changed_at FROM memory_history WHERE memory_id = ${id} ORDER BY id DESC`.pipe(
          Effect.map((rows) =>
            rows.map((r) => ({
              change: r.change,
              changed_at: iso(r.changed_at),
              previous: r.previous === null ? null : {
                text: r.previous.text,
                context: r.previous.context ?? "",
                metadata: r.previous.metadata ?? {},
                tags: r.previous.tags ?? [],
                state: r.previous.state ?? "active"
              }
            }))
          ),
          storeFailure
        ),

      /** Memories whose vector is missing or was made by another embedder. */
      staleEmbeddings: (orgId: string, spaceId: string, embedder: string) =>
        sql<{ id: string; text: string }>`SELECT id, text FROM memories WHERE org_id = ${orgId} AND space_id = ${spaceId}
          AND (embedder IS NULL OR embedder <> ${embedder}) ORDER BY id`.pipe(storeFailure),

      setEmbeddings: (embedder: string, vectors: ReadonlyArray<readonly [id: string, vector: Float32Array]>) =>
        Effect.forEach(vectors, ([id, vector]) =>
          sql`UPDATE memories SET embedding = ${vectorToBytes(vector)}, embedder = ${embedder} WHERE id = ${id}`, {
          discard: true
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("MemoryRepo.setEmbeddings"))
    }
  })
}) {}
