/**
 * What an export reads: a space's memories (with their history and vector),
 * documents, memory models (with their history), user profiles and settings,
 * each a page at a time after a cursor (keyset pagination on an index), so an
 * export of any size holds one page of rows. Rows leave as lines of the
 * export format.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { DocumentLine, type HistoryEntry, type MemoryLine, type ModelLine, SettingsLine, type UserProfileLine } from "../../src/domain/ExportFormat.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { HistoryRow, INDEX_COLUMNS, IndexedMemoryFromRow, withCreation } from "./MemoryRows.ts"
import { ModelRow } from "./ModelRepo.ts"
import { storeFailure } from "./SqlFailure.ts"

/** Where the next page of memories starts: after this (created_at as the store prints it, id). */
export interface MemoryCursor {
  readonly at: string
  readonly id: string
}

const decodeMemories = decodeRows(IndexedMemoryFromRow)
const decodeCursors = decodeRows(Schema.Struct({ cursor_at: Schema.String, id: Schema.String }))
const decodeHistory = decodeRows(Schema.Struct({ memory_id: Schema.String, ...HistoryRow.fields }))
const decodeDocuments = decodeRows(Schema.Struct({
  document_id: Schema.String,
  source: Schema.Literal("file", "custom", "memory"),
  filename: Schema.NullOr(Schema.String),
  text_length: Int8,
  tags: Schema.Array(Schema.String),
  created_at: Timestamptz,
  updated_at: Timestamptz
}))
// A model as ModelRepo reads it, with its stored staleness flag and last change in place of the computed one.
const decodeModels = decodeRows(Schema.Struct({
  ...ModelRow.omit("space_id", "is_stale", "marked_stale").fields,
  stale: Schema.Boolean,
  updated_at: Timestamptz
}))
const decodeModelHistory = decodeRows(Schema.Struct({ model_id: Schema.String, previous_content: Schema.String, changed_at: Timestamptz }))
const decodeProfiles = decodeRows(Schema.Struct({
  user_id: Schema.String,
  memory_count: Int8,
  first_seen: Timestamptz,
  last_active: Timestamptz
}))
const decodeSettings = decodeRows(Schema.Struct({ kind: Schema.String, value: Schema.Unknown, updated_at: Timestamptz }))
/** What the settings services wrote decodes; anything else is a bug, not the exporter's to hide. */
const decodeSetting = (raw: unknown) => Effect.orDie(Schema.decodeUnknown(SettingsLine)(raw))

/** Groups rows by a key, keeping their order. */
const groupBy = <A>(rows: ReadonlyArray<A>, key: (a: A) => string) => {
  const groups = new Map<string, Array<A>>()
  for (const row of rows) {
    const group = groups.get(key(row))
    if (group === undefined) groups.set(key(row), [row])
    else group.push(row)
  }
  return groups
}

export class ExportRepo extends Effect.Service<ExportRepo>()("engram/store/ExportRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const indexColumns = sql.literal(INDEX_COLUMNS)
    const inSpace = (space: SpaceRef) => sql`org_id = ${space.orgId} AND space_id = ${space.spaceId}`

    /** A page of memories in the order they were stored (the index `memories_space`), with their history, oldest first. */
    const memories = (space: SpaceRef, after: MemoryCursor | null, limit: number) =>
      Effect.gen(function*() {
        const from = after === null ? sql`true` : sql`(created_at, id) > (${after.at}::timestamptz, ${after.id})`
        const rows = yield* sql`SELECT ${indexColumns}, created_at::text AS cursor_at FROM memories
          WHERE ${inSpace(space)} AND ${from} ORDER BY created_at, id LIMIT ${limit}`
        const found = yield* decodeMemories(rows)
        const cursors = yield* decodeCursors(rows)
        const history = found.length === 0 ? [] : yield* sql`SELECT memory_id, change, previous, changed_at FROM memory_history
          WHERE ${inSpace(space)} AND memory_id = ANY(${found.map((m) => m.id)}) ORDER BY memory_id, id`.pipe(
          Effect.flatMap(decodeHistory)
        )
        const byMemory = groupBy(history, (h) => h.memory_id)
        const lines = found.map((m): MemoryLine => ({
          kind: "memory",
          id: m.id,
          document_id: m.documentId,
          type: m.type,
          state: m.state,
          text: m.text,
          source_text: m.sourceText,
          context: m.context,
          entities: m.entities,
          metadata: m.metadata,
          tags: m.tags,
          user_id: m.userId,
          agent_id: m.agentId,
          session_id: m.sessionId,
          member_id: m.memberId,
          event_time: m.eventTime,
          occurred_start: m.occurredStart,
          occurred_end: m.occurredEnd,
          source_ids: m.sourceIds,
          position: m.position,
          consolidated_at: m.consolidatedAt,
          superseded_by: m.supersededBy,
          created_at: m.createdAt,
          updated_at: m.updatedAt,
          // A vector the embedder makes from words is not stored, yet the model is named (the export fills the vector in).
          embedding_model: m.embedder,
          embedding: m.embedding === null ? null : Buffer.from(m.embedding).toString("base64"),
          history: withCreation(byMemory.get(m.id) ?? [], m.createdAt).map((h): HistoryEntry => ({
            change: h.change,
            previous: h.previous,
            changed_at: h.changed_at
          }))
        }))
        const last = cursors[cursors.length - 1]
        return { lines, next: last === undefined ? null : { at: last.cursor_at, id: last.id } }
      }).pipe(storeFailure, Effect.withSpan("ExportRepo.memories"))

    return {
      memories,

      documents: (space: SpaceRef, after: string | null, limit: number) =>
        sql`SELECT document_id, source, filename, text_length, tags, created_at, updated_at FROM documents
          WHERE ${inSpace(space)} AND ${after === null ? sql`true` : sql`document_id > ${after}`}
          ORDER BY document_id LIMIT ${limit}`.pipe(
          Effect.flatMap(decodeDocuments),
          Effect.map((rows) => rows.map((row): DocumentLine => ({ kind: "document", ...row }))),
          storeFailure
        ),

      models: (space: SpaceRef, after: string | null, limit: number) =>
        Effect.gen(function*() {
          const rows = yield* sql`SELECT model_id, name, query, content, tags, max_tokens, trigger_mode, refresh_on_new,
              trigger_types, last_refreshed_at, refreshed_query, stale, created_at, updated_at FROM memory_models
            WHERE ${inSpace(space)} AND ${after === null ? sql`true` : sql`model_id > ${after}`}
            ORDER BY model_id LIMIT ${limit}`.pipe(Effect.flatMap(decodeModels))
          const history = rows.length === 0 ? [] : yield* sql`SELECT model_id, previous_content, changed_at
            FROM memory_model_history WHERE ${inSpace(space)} AND model_id = ANY(${rows.map((r) => r.model_id)})
            ORDER BY model_id, id`.pipe(Effect.flatMap(decodeModelHistory))
          const byModel = groupBy(history, (h) => h.model_id)
          return rows.map((row): ModelLine => ({
            kind: "memory_model",
            ...row,
            history: (byModel.get(row.model_id) ?? []).map((h) => ({ previous_content: h.previous_content, changed_at: h.changed_at }))
          }))
        }).pipe(storeFailure),

      /** Each user_id with active memories: how many, and when the first and the last were recorded. */
      userProfiles: (space: SpaceRef, after: string | null, limit: number) =>
        sql`SELECT user_id, count(*) AS memory_count, min(created_at) AS first_seen, max(created_at) AS last_active
          FROM memories WHERE ${inSpace(space)} AND state = 'active' AND user_id IS NOT NULL
            AND ${after === null ? sql`true` : sql`user_id > ${after}`}
          GROUP BY user_id ORDER BY user_id LIMIT ${limit}`.pipe(
          Effect.flatMap(decodeProfiles),
          Effect.map((rows) => rows.map((row): UserProfileLine => ({ kind: "user_profile", ...row }))),
          storeFailure
        ),

      settings: (space: SpaceRef) =>
        sql`SELECT kind, value, updated_at FROM space_settings WHERE ${inSpace(space)} ORDER BY kind`.pipe(
          Effect.flatMap(decodeSettings),
          Effect.flatMap((rows) =>
            Effect.forEach(rows, (row) =>
              decodeSetting({ kind: "settings", setting: row.kind, value: row.value, updated_at: row.updated_at.toISOString() }))
          ),
          storeFailure
        )
    }
  })
}) {}
