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

/** The memories of one write, under its document. */
export interface DocumentWrites {
  readonly document: DocumentWrite
  readonly memories: ReadonlyArray<NewMemory>
}

const documentRecord = (doc: DocumentWrite) => ({
  document_id: doc.documentId,
  source: doc.source,
  text_length: doc.textLength,
  tags: doc.tags
})

/** A memory as one record of a multi-row insert: times in epoch milliseconds, the vector in base64. */
const memoryRecord = (documentId: string, m: NewMemory) => ({
  id: m.id,
  document_id: documentId,
  text: m.text,
  source_text: m.sourceText,
  context: m.context,
  type: m.type,
  entities: m.entities,
  metadata: m.metadata,
  tags: m.tags,
  user_id: m.userId,
  agent_id: m.agentId,
  session_id: m.sessionId,
  member_id: m.memberId,
  event_time: m.eventTime.getTime(),
  occurred_start: m.occurredStart?.getTime() ?? null,
  occurred_end: m.occurredEnd?.getTime() ?? null,
  position: m.position,
  embedding: m.embedding ? vectorToBytes(m.embedding).toString("base64") : null,
  embedder: m.embedder
})

const COLUMNS = `id, org_id, space_id, document_id, text, source_text, context, type, state, entities, metadata, tags,
  user_id, agent_id, session_id, member_id, event_time, occurred_start, occurred_end, source_ids, position,
  embedding, embedder, created_at, updated_at`

export const vectorToBytes = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)
export const bytesToVector = (bytes: Uint8Array) => {
  const copy = new Uint8Array(bytes)
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4))
}

/** The columns a listed memory shows. */
export type ListedRow = Omit<MemoryRow, "org_id" | "space_id" | "source_text" | "position" | "embedding" | "embedder" | "entities"> & {
  readonly entities: ReadonlyArray<{ readonly name: string }>
}

export const toMemoryItem = (row: ListedRow) => ({
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
     * Stores writes, in order, each under its document, with one statement per
     * table. Reusing a document_id replaces that document's memories, so of
     * several writes to one document only the last one's memories remain.
     * Answers the stored rows and the ids of the memories replaced.
     */
    const insertDocuments = (orgId: string, spaceId: string, writes: ReadonlyArray<DocumentWrites>, now: Date) =>
      Effect.gen(function*() {
        const last = new Map<string, DocumentWrites>()
        for (const write of writes) last.set(write.document.documentId, write)
        if (last.size === 0) return { rows: [] as Array<MemoryRow>, replaced: [] as Array<string> }
        const kept = [...last.values()]
        const memories = kept.flatMap((write) => write.memories.map((m) => memoryRecord(write.document.documentId, m)))

        // One index probe per document (OFFSET 0 keeps the planner from flattening the lookup): PGlite never
        // gathers statistics, and without them `document_id = ANY(...)` was planned as a scan of the whole space.
        const replaced = yield* sql<{ id: string }>`DELETE FROM memories m USING (
            SELECT found.id FROM unnest(${[...last.keys()]}::text[]) AS d(document_id)
            CROSS JOIN LATERAL (SELECT id FROM memories WHERE org_id = ${orgId} AND space_id = ${spaceId}
              AND document_id = d.document_id OFFSET 0) AS found
          ) r WHERE m.id = r.id RETURNING m.id`
        yield* sql`INSERT INTO documents (org_id, space_id, document_id, source, text_length, tags, created_at, updated_at)
          SELECT ${orgId}::text, ${spaceId}::text, d.document_id, d.source, d.text_length, d.tags,
            ${now}::timestamptz, ${now}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(kept.map((write) => documentRecord(write.document)))}::jsonb)
            AS d(document_id text, source text, text_length integer, tags text[])
          ON CONFLICT (org_id, space_id, document_id) DO UPDATE
          SET text_length = EXCLUDED.text_length, tags = EXCLUDED.tags, updated_at = EXCLUDED.updated_at`
        if (memories.length === 0) return { rows: [] as Array<MemoryRow>, replaced: replaced.map((r) => r.id) }
        const inserted = yield* sql<MemoryRow>`INSERT INTO memories (id, org_id, space_id, document_id, text, source_text,
            context, type, entities, metadata, tags, user_id, agent_id, session_id, member_id, event_time,
            occurred_start, occurred_end, position, embedding, embedder, created_at, updated_at)
          SELECT m.id, ${orgId}::text, ${spaceId}::text, m.document_id, m.text, m.source_text, m.context, m.type,
            m.entities, m.metadata, m.tags, m.user_id, m.agent_id, m.session_id, m.member_id,
            to_timestamp(m.event_time / 1000), to_timestamp(m.occurred_start / 1000), to_timestamp(m.occurred_end / 1000),
            m.position, decode(m.embedding, 'base64'), m.embedder,
            ${now}::timestamptz, ${now}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(memories)}::jsonb) AS m(id text, document_id text, text text,
            source_text text, context text, type text, entities jsonb, metadata jsonb, tags text[], user_id text,
            agent_id text, session_id text, member_id text, event_time float8, occurred_start float8,
            occurred_end float8, position integer, embedding text, embedder text)
          RETURNING ${columns}`
        const ids = memories.map((m) => m.id)
        yield* sql`INSERT INTO memory_history (memory_id, change, previous, changed_at)
          SELECT h.id, 'created', NULL, ${now}::timestamptz FROM unnest(${ids}::text[]) WITH ORDINALITY AS h(id, n) ORDER BY h.n`
        const byId = new Map(inserted.map((row) => [row.id, row]))
        return { rows: ids.map((id) => byId.get(id)!), replaced: replaced.map((r) => r.id) }
      })

    return {
      /** One write, in its own transaction. */
      insertDocument: (orgId: string, spaceId: string, doc: DocumentWrite, memories: ReadonlyArray<NewMemory>, now: Date) =>
        insertDocuments(orgId, spaceId, [{ document: doc, memories }], now).pipe(
          sql.withTransaction,
          storeFailure,
          Effect.withSpan("MemoryRepo.insertDocument")
        ),

      /** Several writes inside a caller's transaction (queued items mark themselves done in it). */
      insertDocumentsInTransaction: (orgId: string, spaceId: string, writes: ReadonlyArray<DocumentWrites>, now: Date) =>
        insertDocuments(orgId, spaceId, writes, now).pipe(Effect.withSpan("MemoryRepo.insertDocuments", {
          attributes: { writes: writes.length }
        })),

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

      /** Newest first; unless prefer_observations is false, facts behind an active note (or other synthesis) are left out. */
      list: (orgId: string, spaceId: string, query: MemoryListQuery) => {
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
        if (query.prefer_observations !== false) {
          conditions.push(sql`NOT (memories.type = 'fact' AND EXISTS (SELECT 1 FROM memories n
            WHERE n.org_id = memories.org_id AND n.space_id = memories.space_id AND n.type <> 'fact'
              AND n.state = 'active' AND memories.id = ANY(n.source_ids)))`)
        }
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
