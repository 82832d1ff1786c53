/**
 * What an import writes, a page at a time inside the one transaction of the
 * import: rows as the export file has them, ids and times kept (a memory's
 * id is unique within its space, so the space it came from may sit beside
 * it), its history in order, its place in the entity graph counted as a
 * write would. The caller holds the space's writer.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { DocumentLine, MemoryLine, ModelLine, SettingsLine } from "../../src/domain/ExportFormat.ts"
import { entityKeys, makeEntityStatements } from "./EntityRows.ts"
import { entitiesColumn } from "./MemoryRows.ts"

const encodeDocument = Schema.encodeSync(DocumentLine)
const encodeMemory = Schema.encodeSync(MemoryLine)
const encodeModel = Schema.encodeSync(ModelLine)
const encodeSettings = Schema.encodeSync(SettingsLine)

export class ImportRepo extends Effect.Service<ImportRepo>()("engram/store/ImportRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const graph = makeEntityStatements(sql)

    return {
      documents: (space: SpaceRef, lines: ReadonlyArray<DocumentLine>) =>
        lines.length === 0 ? Effect.void : sql`INSERT INTO documents (org_id, space_id, document_id, source, filename,
            text_length, tags, created_at, updated_at)
          SELECT ${space.orgId}::text, ${space.spaceId}::text, d.document_id, d.source, d.filename, d.text_length, d.tags,
            d.created_at, d.updated_at
          FROM jsonb_to_recordset(${JSON.stringify(lines.map((line) => encodeDocument(line)))}::jsonb) AS d(document_id text, source text,
            filename text, text_length integer, tags text[], created_at timestamptz, updated_at timestamptz)`.pipe(Effect.asVoid),

      /** Memories with their history; the raw ones (no sources) are counted in the entity graph. */
      memories: (space: SpaceRef, lines: ReadonlyArray<MemoryLine>) =>
        Effect.gen(function*() {
          if (lines.length === 0) return
          const encoded = lines.map((line) => encodeMemory(line))
          yield* sql`INSERT INTO memories (id, org_id, space_id, document_id, text, source_text, context, type, state,
              entities, entity_keys, metadata, tags, user_id, agent_id, session_id, member_id, event_time, occurred_start, occurred_end,
              source_ids, position, embedding, embedder, consolidated_at, superseded_by, created_at, updated_at)
            SELECT m.id, ${space.orgId}::text, ${space.spaceId}::text, m.document_id, m.text, m.source_text, m.context,
              m.type, m.state, m.entities, m.entity_keys, m.metadata, m.tags, m.user_id, m.agent_id, m.session_id, m.member_id,
              m.event_time, m.occurred_start, m.occurred_end, m.source_ids, m.position, decode(m.embedding, 'base64'),
              m.embedding_model, m.consolidated_at, m.superseded_by, m.created_at, m.updated_at
            FROM jsonb_to_recordset(${JSON.stringify(encoded.map(({ history: _, ...memory }) => ({
              ...memory,
              entities: entitiesColumn(memory.entities),
              // A raw memory (no sources) is counted in the graph by these; a synthesis is not.
              entity_keys: memory.source_ids.length === 0 ? entityKeys(memory.entities) : []
            })))}::jsonb)
              AS m(id text, document_id text, text text, source_text text, context text, type text, state text,
                entities text, entity_keys text[], metadata jsonb, tags text[], user_id text, agent_id text, session_id text, member_id text,
                event_time timestamptz, occurred_start timestamptz, occurred_end timestamptz, source_ids text[],
                position integer, embedding text, embedding_model text, consolidated_at timestamptz, superseded_by text,
                created_at timestamptz, updated_at timestamptz)`
          const history = encoded.flatMap((memory) => memory.history.map((entry) => ({ memory_id: memory.id, ...entry })))
            .map((entry, ord) => ({ ...entry, ord }))
          // In file order: the entries' ids (a sequence) keep each memory's history in the order it happened.
          if (history.length > 0) {
            yield* sql`INSERT INTO memory_history (org_id, space_id, memory_id, change, previous, changed_at)
              SELECT ${space.orgId}::text, ${space.spaceId}::text, h.memory_id, h.change, h.previous, h.changed_at
              FROM jsonb_to_recordset(${JSON.stringify(history)}::jsonb)
                AS h(memory_id text, change text, previous jsonb, changed_at timestamptz, ord integer)
              ORDER BY h.ord`
          }
          yield* graph.record(
            space,
            lines.filter((m) => m.source_ids.length === 0).map((m) => ({ id: m.id, entities: m.entities, at: m.event_time }))
          )
        }).pipe(Effect.withSpan("ImportRepo.memories", { attributes: { memories: lines.length } })),

      models: (space: SpaceRef, lines: ReadonlyArray<ModelLine>) =>
        Effect.gen(function*() {
          if (lines.length === 0) return
          const encoded = lines.map((line) => encodeModel(line))
          yield* sql`INSERT INTO memory_models (org_id, space_id, model_id, name, query, content, tags, max_tokens,
              trigger_mode, refresh_on_new, trigger_types, last_refreshed_at, refreshed_query, stale, created_at, updated_at)
            SELECT ${space.orgId}::text, ${space.spaceId}::text, m.model_id, m.name, m.query, m.content, m.tags,
              m.max_tokens, m.trigger_mode, m.refresh_on_new, m.trigger_types, m.last_refreshed_at, m.refreshed_query,
              m.stale, m.created_at, m.updated_at
            FROM jsonb_to_recordset(${JSON.stringify(encoded.map(({ history: _, ...model }) => model))}::jsonb)
              AS m(model_id text, name text, query text, content text, tags text[], max_tokens integer, trigger_mode text,
                refresh_on_new boolean, trigger_types text[], last_refreshed_at timestamptz, refreshed_query text,
                stale boolean, created_at timestamptz, updated_at timestamptz)`
          const history = encoded.flatMap((model) => model.history.map((entry) => ({ model_id: model.model_id, ...entry })))
            .map((entry, ord) => ({ ...entry, ord }))
          if (history.length > 0) {
            yield* sql`INSERT INTO memory_model_history (org_id, space_id, model_id, previous_content, changed_at)
              SELECT ${space.orgId}::text, ${space.spaceId}::text, h.model_id, h.previous_content, h.changed_at
              FROM jsonb_to_recordset(${JSON.stringify(history)}::jsonb)
                AS h(model_id text, previous_content text, changed_at timestamptz, ord integer)
              ORDER BY h.ord`
          }
        }),

      /** A settings document of the space, replacing the one it has. */
      settings: (space: SpaceRef, line: SettingsLine) => {
        const encoded = encodeSettings(line)
        return sql`INSERT INTO space_settings (org_id, space_id, kind, value, updated_at)
          VALUES (${space.orgId}, ${space.spaceId}, ${encoded.setting}, ${JSON.stringify(encoded.value)}::jsonb,
            ${encoded.updated_at}::timestamptz)
          ON CONFLICT (org_id, space_id, kind) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`.pipe(
          Effect.asVoid
        )
      }
    }
  })
}) {}
