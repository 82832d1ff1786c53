/**
 * Memories, their documents and history. Every statement names the
 * organization and space; the Space entity is the only writer of a space.
 * Rows leave this module decoded into the domain model.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { MemoryId, type SpaceRef } from "../../src/domain/Ids.ts"
import { type MemoryListQuery, type MemoryState, Metadata } from "../../src/domain/Memories.ts"
import type { IndexedMemory, Memory } from "../../src/domain/Memory.ts"
import { decodeRows, decodeRowsInChunks, Int8, Timestamptz } from "./Columns.ts"
import {
  factsBehindSyntheses,
  type DocumentWrite,
  type DocumentWrites,
  HistoryRow,
  INDEX_COLUMNS,
  IndexedMemoryFromRow,
  insertedMemory,
  LIST_COLUMNS,
  MemoryFromRow,
  memoryRecord,
  withCreation,
  vectorToBytes
} from "./MemoryRows.ts"
import { storeFailure } from "./SqlFailure.ts"
import { makeEntityStatements } from "./EntityRows.ts"
import { noteErasure } from "./Erasures.ts"
import { StoreGrowth } from "./Statistics.ts"

const documentRecord = (doc: DocumentWrite) => ({
  document_id: doc.documentId,
  source: doc.source,
  text_length: doc.textLength,
  tags: doc.tags,
  filename: doc.filename ?? null
})

const decodeIndexed = decodeRows(IndexedMemoryFromRow)
const decodeIndexedInChunks = decodeRowsInChunks(IndexedMemoryFromRow)
const decodeListed = decodeRows(MemoryFromRow)
const decodeVersion = decodeRows(Schema.Struct({ version: Int8 }))
const decodeCursors = decodeRows(Schema.Struct({ id: Schema.String, cursor_at: Schema.String }))
/**
 * A page of texts as one JSON array of rows, each `[id, text, source_text,
 * source_diff, context, metadata, cursor_at]`: one value over the wire rather
 * than seven a row (a woken space's 100,000 texts read back in about half the
 * CPU).
 */
const TextTuple = Schema.Tuple(
  Schema.String,
  Schema.String,
  Schema.String,
  Schema.NullOr(Schema.String),
  Schema.String,
  Metadata,
  Schema.String
)
const decodeTextPage = decodeRows(Schema.Struct({ page: Schema.NullOr(Schema.parseJson(Schema.Array(TextTuple))) }))
const decodeHistory = decodeRows(HistoryRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodeCreated = decodeRows(Schema.Struct({ created_at: Timestamptz }))
/** insertDocuments' one row per stored memory's id (or one empty row), each carrying the replaced ids. */
const Gone = Schema.Struct({ id: MemoryId, keys: Schema.Array(Schema.String) })
const decodeInserted = decodeRows(Schema.Struct({ replaced: Schema.Array(Gone), id: Schema.NullOr(Schema.String) }))
/** Deleted memories: their ids and the entity keys they uncount from the graph. */
const decodeGone = decodeRows(Schema.Struct({ id: MemoryId, entity_keys: Schema.Array(Schema.String) }))
const decodeGoneWithDocument = decodeRows(
  Schema.Struct({ id: MemoryId, entity_keys: Schema.Array(Schema.String), document_id: Schema.NullOr(Schema.String) })
)

/** Where a page of a space's memories ends: the last one's creation time as the store writes it, and its id. */
export interface PageCursor {
  readonly at: string
  readonly id: string
}

/** What an edit sets; `embedding` replaces the vector when the text changed. */
export interface MemoryChange {
  readonly text: string
  readonly context: string
  readonly metadata: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly state: MemoryState
  readonly embedding: { readonly vector: Float32Array | null; readonly embedder: string } | null
}

export class MemoryRepo extends Effect.Service<MemoryRepo>()("engram/store/MemoryRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const indexColumns = sql.literal(INDEX_COLUMNS)
    const listColumns = sql.literal(LIST_COLUMNS)
    const graph = makeEntityStatements(sql)
    const growth = yield* StoreGrowth

    /**
     * Stores writes, in order, each under its document, in one statement (one
     * round trip, atomic on its own or inside a caller's transaction);
     * memories take positions from `firstPosition` on. Reusing a document_id
     * replaces that document's memories, so of several writes to one
     * document only the last one's memories remain. Answers the stored
     * memories and the ids of the memories replaced. The stored memories are
     * made here from what was written (`insertedMemory`), not read back:
     * echoing every column of a group of 50 long turns (the vectors as hex)
     * cost PGlite 12-24 ms and the client as much again to parse and decode.
     */
    const insertDocuments = (space: SpaceRef, writes: ReadonlyArray<DocumentWrites>, firstPosition: number, now: Date) =>
      Effect.gen(function*() {
        const last = new Map<string, DocumentWrites>()
        for (const write of writes) last.set(write.document.documentId, write)
        if (last.size === 0) return { memories: [] as ReadonlyArray<IndexedMemory>, replaced: [] as ReadonlyArray<MemoryId> }
        const kept = [...last.values()]
        let position = firstPosition
        const stored: Array<IndexedMemory> = []
        const memories = kept.flatMap((write) =>
          write.memories.map((m) => {
            stored.push(insertedMemory(space, write.document.documentId, position, m, now))
            return memoryRecord(write.document.documentId, position++, m)
          })
        )
        // One index probe per document (OFFSET 0 keeps the planner from flattening the lookup): PGlite never
        // gathers statistics, and without them `document_id = ANY(...)` was planned as a scan of the whole space.
        // The foreign keys (memory -> document, history -> memory) are checked when the whole statement ends.
        // The delete joins on the found rows' own keys: naming the space on `m` as well made the planner scan the
        // space and run the lookups once per memory in it (an upload of 500 documents into 1,000 memories: 40 s).
        const rows = yield* sql`WITH replaced AS (
            DELETE FROM memories m USING (
              SELECT found.org_id, found.space_id, found.id FROM unnest(${[...last.keys()]}::text[]) AS d(document_id)
              CROSS JOIN LATERAL (SELECT org_id, space_id, id FROM memories WHERE org_id = ${space.orgId}
                AND space_id = ${space.spaceId} AND document_id = d.document_id OFFSET 0) AS found
            ) r WHERE m.org_id = r.org_id AND m.space_id = r.space_id AND m.id = r.id RETURNING m.id, m.entity_keys
          ), documents_written AS (
            INSERT INTO documents (org_id, space_id, document_id, source, text_length, tags, filename, created_at, updated_at)
            SELECT ${space.orgId}::text, ${space.spaceId}::text, d.document_id, d.source, d.text_length, d.tags, d.filename,
              ${now}::timestamptz, ${now}::timestamptz
            FROM jsonb_to_recordset(${JSON.stringify(kept.map((write) => documentRecord(write.document)))}::jsonb)
              AS d(document_id text, source text, text_length integer, tags text[], filename text)
            ON CONFLICT (org_id, space_id, document_id) DO UPDATE
            SET text_length = EXCLUDED.text_length, tags = EXCLUDED.tags, updated_at = EXCLUDED.updated_at,
              source = EXCLUDED.source, filename = EXCLUDED.filename
            RETURNING 1
          ), inserted AS (
            INSERT INTO memories (id, org_id, space_id, document_id, text, source_text, source_diff,
              context, type, state, entities, entity_keys, metadata, tags, user_id, agent_id, session_id, member_id, event_time,
              occurred_start, occurred_end, position, embedding, embedder, created_at, updated_at)
            SELECT m.id, ${space.orgId}::text, ${space.spaceId}::text, m.document_id, m.text, m.source_text, m.source_diff,
              m.context, m.type, m.state, m.entities, m.entity_keys, m.metadata, m.tags, m.user_id, m.agent_id, m.session_id, m.member_id,
              to_timestamp(m.event_time / 1000), to_timestamp(m.occurred_start / 1000), to_timestamp(m.occurred_end / 1000),
              m.position, decode(m.embedding, 'base64'), m.embedder,
              ${now}::timestamptz, ${now}::timestamptz
            FROM jsonb_to_recordset(${JSON.stringify(memories)}::jsonb) AS m(id text, document_id text, text text,
              source_text text, source_diff text, context text, type text, state text, entities text, entity_keys text[], metadata jsonb, tags text[], user_id text,
              agent_id text, session_id text, member_id text, event_time float8, occurred_start float8,
              occurred_end float8, position integer, embedding text, embedder text)
            ORDER BY m.position
            RETURNING id, org_id, space_id, position
          )
          SELECT r.replaced, (SELECT count(*) FROM documents_written) AS documents, i.id
          FROM (SELECT coalesce(json_agg(json_build_object('id', id, 'keys', entity_keys)), '[]') AS replaced FROM replaced) r
          LEFT JOIN inserted i ON true`
        const heads = yield* decodeInserted(rows)
        const replaced = heads[0]?.replaced ?? []
        const replacedIds = replaced.map((r) => r.id)
        const insertedIds = new Set(heads.flatMap((head) => (head.id === null ? [] : [head.id])))
        if (insertedIds.size !== stored.length || stored.some((m) => !insertedIds.has(m.id))) {
          return yield* Effect.dieMessage(`the store inserted ${insertedIds.size} of ${stored.length} memories in one statement`)
        }
        // The graph follows in the same transaction: the replaced memories' entities uncounted, the new ones counted.
        yield* graph.forget(space, replaced)
        if (replaced.length > 0) yield* noteErasure(sql, "replaced-memories")
        yield* graph.record(space, stored.map((m) => ({ id: m.id, entities: m.entities, at: m.eventTime })))
        yield* growth.wrote(stored.length)
        return { memories: stored, replaced: replacedIds }
      }).pipe(Effect.withSpan("MemoryRepo.insertDocuments", { attributes: { writes: writes.length } }))

    return {
      insertDocuments,

      /** Runs `effect` in one transaction; a store that cannot be reached is a 503, any other failure a defect. */
      transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(sql.withTransaction, storeFailure),

      /** Runs a single statement (atomic by itself), with the same failure mapping as `transaction`. */
      statement: <A, E, R>(effect: Effect.Effect<A, E, R>) => storeFailure(effect),

      /** Every memory of a space with its vector, for building its index. */
      loadSpace: (space: SpaceRef) =>
        sql`SELECT ${indexColumns} FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
          ORDER BY created_at, id`.pipe(Effect.flatMap(decodeIndexedInChunks), storeFailure, Effect.withSpan("MemoryRepo.loadSpace")),

      /**
       * One page of a space's memories with their vectors, in the order they
       * were stored, after `after` (the last page's last memory): a large
       * space is read a page at a time, so no one statement holds the store long.
       */
      loadPage: (space: SpaceRef, after: PageCursor | null, limit: number) =>
        Effect.gen(function*() {
          const rows = yield* sql`SELECT ${indexColumns}, created_at::text AS cursor_at FROM memories
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
            AND ${after === null ? sql`true` : sql`(created_at, id) > (${after.at}::timestamptz, ${after.id})`}
            ORDER BY created_at, id LIMIT ${limit}`
          const memories = yield* decodeIndexed(rows)
          const cursors = yield* decodeCursors(rows)
          const last = cursors[cursors.length - 1]
          // The cursor is the store's own timestamp text: a Date would drop its microseconds.
          return { memories, next: last === undefined ? null : { at: last.cursor_at, id: last.id } }
        }).pipe(storeFailure, Effect.withSpan("MemoryRepo.loadPage")),

      /** One page of a space's texts and metadata, in the order `loadPage` reads: for an index woken without them. */
      textPage: (space: SpaceRef, after: PageCursor | null, limit: number) =>
        Effect.gen(function*() {
          const rows = yield* sql`SELECT json_agg(json_build_array(id, text, source_text, source_diff, context, metadata, created_at::text)
              ORDER BY created_at, id)::text AS page
            FROM (SELECT id, text, source_text, source_diff, context, metadata, created_at FROM memories
              WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
              AND ${after === null ? sql`true` : sql`(created_at, id) > (${after.at}::timestamptz, ${after.id})`}
              ORDER BY created_at, id LIMIT ${limit}) page`
          const texts = (yield* decodeTextPage(rows))[0]?.page?.map(
            ([id, text, source_text, source_diff, context, metadata, cursor_at]) => ({ id, text, source_text, source_diff, context, metadata, cursor_at })
          ) ?? []
          const last = texts[texts.length - 1]
          return { texts, next: last === undefined ? null : { at: last.cursor_at, id: last.id } }
        }).pipe(storeFailure, Effect.withSpan("MemoryRepo.textPage")),

      /** The version of the space's memories (raised by every statement that changes any): what a snapshot is checked against. */
      storeVersion: (space: SpaceRef) =>
        sql`SELECT version FROM space_versions WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`.pipe(
          Effect.flatMap(decodeVersion),
          Effect.map((rows) => rows[0]?.version ?? 0),
          storeFailure
        ),

      /** These memories (those that exist), as listed. */
      findMany: (space: SpaceRef, ids: ReadonlyArray<string>) =>
        sql`SELECT ${listColumns} FROM memories
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ANY(${ids as Array<string>})`.pipe(
          Effect.flatMap(decodeListed),
          storeFailure
        ),

      find: (space: SpaceRef, id: string) =>
        sql`SELECT ${listColumns} FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ${id}`.pipe(
          Effect.flatMap(decodeListed),
          Effect.map((rows): Option.Option<Memory> => Option.fromNullable(rows[0])),
          storeFailure
        ),

      /** Newest first; unless prefer_observations is false, facts behind an active note (or other synthesis) are left out. */
      list: (space: SpaceRef, query: MemoryListQuery) => {
        const conditions = [sql`org_id = ${space.orgId}`, sql`space_id = ${space.spaceId}`]
        const state = query.state ?? "active"
        if (state !== "all") conditions.push(sql`state = ${state}`)
        if (query.type !== undefined) conditions.push(sql`type = ${query.type}`)
        if (query.user_id !== undefined) conditions.push(sql`user_id = ${query.user_id}`)
        if (query.agent_id !== undefined) conditions.push(sql`agent_id = ${query.agent_id}`)
        if (query.session_id !== undefined) conditions.push(sql`session_id = ${query.session_id}`)
        if (query.document_id !== undefined) conditions.push(sql`document_id = ${query.document_id}`)
        // Array overlap: the form a GIN index on tags serves.
        if (query.tags !== undefined) conditions.push(sql`tags && ${[...query.tags]}::text[]`)
        if (query.ids !== undefined) conditions.push(sql`id = ANY(${[...query.ids]}::text[])`)
        if (query.q !== undefined && query.q.trim() !== "") {
          conditions.push(sql`strpos(lower(text), ${query.q.trim().toLowerCase()}) > 0`)
        }
        if (query.prefer_observations !== false) {
          conditions.push(sql`NOT (type = 'fact' AND id IN ${factsBehindSyntheses(sql, space, "any")})`)
        }
        const where = sql.and(conditions)
        return Effect.all({
          items: sql`SELECT ${listColumns} FROM memories WHERE ${where}
            ORDER BY created_at DESC, position DESC, id LIMIT ${query.limit} OFFSET ${query.offset}`.pipe(
            Effect.flatMap(decodeListed)
          ),
          total: sql`SELECT count(*) AS n FROM memories WHERE ${where}`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items, total: total[0]?.n ?? 0 })),
          storeFailure
        )
      },

      /**
       * Records what the memory said before, then changes it (and its vector,
       * when the text changed). Answers the memory afterwards, or none if it
       * no longer exists. Run it inside a transaction.
       */
      update: (memory: Memory, change: MemoryChange, kind: "edited" | "retired" | "restored", now: Date) =>
        Effect.gen(function*() {
          const previous = { text: memory.text, context: memory.context, metadata: memory.metadata, tags: memory.tags, state: memory.state }
          const vector = change.embedding?.vector == null ? null : vectorToBytes(change.embedding.vector)
          const embedder = change.embedding?.embedder ?? null
          // The source is written whole again: edits stored against the old text would not make it from a new one.
          // A new text is its own source: what an edit removed is kept only in the history, not in source_text.
          const source = change.text === memory.text ? memory.sourceText : change.text
          const rows = yield* sql`UPDATE memories SET text = ${change.text}, source_text = ${source}, source_diff = NULL,
              context = ${change.context},
              metadata = ${JSON.stringify(change.metadata)}::jsonb, tags = ${change.tags as Array<string>},
              state = ${change.state}, updated_at = ${now},
              embedding = CASE WHEN ${change.text} = text THEN embedding ELSE ${vector} END,
              embedder = CASE WHEN ${change.text} = text THEN embedder ELSE ${embedder} END
            WHERE id = ${memory.id} AND org_id = ${memory.orgId} AND space_id = ${memory.spaceId}
            RETURNING ${indexColumns}`.pipe(Effect.flatMap(decodeIndexed))
          if (rows.length === 0) return Option.none<IndexedMemory>()
          // What an edit took out of the text is kept only in the history the contract defines.
          const rewritten = change.text !== memory.text || change.context !== memory.context ||
            JSON.stringify(change.metadata) !== JSON.stringify(memory.metadata)
          if (rewritten) yield* noteErasure(sql, "memory-edit")
          yield* sql`INSERT INTO memory_history (org_id, space_id, memory_id, change, previous, changed_at)
            VALUES (${memory.orgId}, ${memory.spaceId}, ${memory.id}, ${kind}, ${JSON.stringify(previous)}::jsonb, ${now})`
          return Option.some(rows[0]!)
        }).pipe(Effect.withSpan("MemoryRepo.update")),

      /**
       * Deletes one memory (and its place in the graph), and its document when
       * it was the document's last memory (nothing of a document is kept that
       * holds no memory: its tags, its name); answers whether it existed. Run
       * it inside a transaction.
       */
      delete: (space: SpaceRef, id: string) =>
        sql`DELETE FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ${id}
            RETURNING id, entity_keys, document_id`
          .pipe(
            Effect.flatMap(decodeGoneWithDocument),
            Effect.tap((rows) => graph.forget(space, rows.map((r) => ({ id: r.id, keys: r.entity_keys })))),
            Effect.tap((rows) => rows.length === 0 ? Effect.void : noteErasure(sql, "memory")),
            Effect.tap((rows) => {
              const documents = rows.flatMap((r) => r.document_id === null ? [] : [r.document_id])
              return documents.length === 0 ? Effect.void : sql`DELETE FROM documents d
                WHERE d.org_id = ${space.orgId} AND d.space_id = ${space.spaceId} AND d.document_id IN ${sql.in(documents)}
                  AND NOT EXISTS (SELECT 1 FROM memories m
                    WHERE m.org_id = d.org_id AND m.space_id = d.space_id AND m.document_id = d.document_id)`
            }),
            Effect.map((rows) => rows.length > 0)
          ),

      /**
       * Deletes a document with its memories (and their place in the graph);
       * answers the ids of the memories deleted, or none if the document did
       * not exist. Run it inside a transaction.
       */
      deleteDocument: (space: SpaceRef, documentId: string) =>
        Effect.gen(function*() {
          const memories = yield* sql`DELETE FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
            AND document_id = ${documentId} RETURNING id, entity_keys`.pipe(Effect.flatMap(decodeGone))
          const documents = yield* sql`DELETE FROM documents WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
            AND document_id = ${documentId} RETURNING document_id`
          yield* graph.forget(space, memories.map((r) => ({ id: r.id, keys: r.entity_keys })))
          if (documents.length > 0) yield* noteErasure(sql, "document")
          return documents.length === 0 ? Option.none<ReadonlyArray<MemoryId>>() : Option.some(memories.map((r) => r.id))
        }),

      /** Newest first, ending with its creation; none when the memory does not exist. */
      history: (space: SpaceRef, id: string) =>
        Effect.gen(function*() {
          const created = yield* sql`SELECT created_at FROM memories
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ${id}`.pipe(Effect.flatMap(decodeCreated))
          const rows = yield* sql`SELECT change, previous, changed_at FROM memory_history
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND memory_id = ${id} ORDER BY id`.pipe(
            Effect.flatMap(decodeHistory)
          )
          const at = created[0]?.created_at
          return [...(at === undefined ? rows : withCreation(rows, at))].reverse().map((r) => ({
            change: r.change,
            changed_at: r.changed_at.toISOString(),
            previous: r.previous === null ? null : { ...r.previous, tags: [...r.previous.tags] }
          }))
        }).pipe(storeFailure),

      /** Memories whose vector is missing or was made by another embedder. */
      staleEmbeddings: (space: SpaceRef, embedder: string) =>
        sql`SELECT id, text FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
          AND (embedder IS NULL OR embedder <> ${embedder}) ORDER BY id`.pipe(
          Effect.flatMap(decodeRows(Schema.Struct({ id: Schema.String, text: Schema.String }))),
          storeFailure
        ),

      setEmbeddings: (space: SpaceRef, embedder: string, vectors: ReadonlyArray<readonly [id: string, vector: Float32Array]>) =>
        Effect.forEach(vectors, ([id, vector]) =>
          sql`UPDATE memories SET embedding = ${vectorToBytes(vector)}, embedder = ${embedder}
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ${id}`, {
          discard: true
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("MemoryRepo.setEmbeddings"))
    }
  })
}) {}
