/**
 * Memory models and their history. Whether a model is stale is read from the
 * store: memories of its tags and types recorded since its last refresh, or a
 * fact it may have drawn on deleted, retired or edited since (`stale`).
 */
import { SqlClient } from "@effect/sql"
import type * as Statement from "@effect/sql/Statement"
import { Effect, Option, Schema } from "effect"
import { Conflict } from "../../src/domain/Errors.ts"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { OrgId, SpaceId } from "../../src/domain/Ids.ts"
import { type MemoryModel, TriggerMemoryType } from "../../src/domain/MemoryModels.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { isUniqueViolation, storeFailure } from "./SqlFailure.ts"
import { noteErasure } from "./Erasures.ts"

export const ModelRow = Schema.Struct({
  model_id: Schema.String,
  space_id: Schema.String,
  name: Schema.String,
  query: Schema.String,
  content: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  max_tokens: Int8,
  trigger_mode: Schema.Literal("full", "delta"),
  refresh_on_new: Schema.Boolean,
  trigger_types: Schema.NullOr(Schema.Array(TriggerMemoryType)),
  last_refreshed_at: Schema.NullOr(Timestamptz),
  refreshed_query: Schema.NullOr(Schema.String),
  created_at: Timestamptz,
  is_stale: Schema.NullOr(Schema.Boolean),
  /** A memory it may have drawn on was deleted, retired or edited since its last refresh. */
  marked_stale: Schema.Boolean
})
export type ModelRow = typeof ModelRow.Type

export const toMemoryModel = (row: ModelRow): MemoryModel => ({
  id: row.model_id,
  space_id: row.space_id,
  name: row.name,
  query: row.query,
  content: row.content,
  tags: [...row.tags],
  max_tokens: row.max_tokens,
  trigger: { mode: row.trigger_mode, refresh_on_new_memories: row.refresh_on_new, memory_type: row.trigger_types },
  last_refreshed_at: row.last_refreshed_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
  is_stale: row.is_stale
})

export interface ModelDefinition {
  readonly name: string
  readonly query: string
  readonly tags: ReadonlyArray<string>
  readonly maxTokens: number
  readonly mode: "full" | "delta"
  readonly refreshOnNew: boolean
  readonly types: ReadonlyArray<string> | null
}

const decodeModels = decodeRows(ModelRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodeHistory = decodeRows(Schema.Struct({ previous_content: Schema.String, changed_at: Timestamptz }))
const decodeIds = decodeRows(Schema.Struct({ model_id: Schema.String }))
const decodeDue = decodeRows(Schema.Struct({ org_id: OrgId, space_id: SpaceId }))

export class ModelRepo extends Effect.Service<ModelRepo>()("engram/store/ModelRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Memories recorded after `since` (an SQL expression) that a model draws on (its tags, its types). */
    const newerFor = (since: Statement.Fragment) =>
      sql`EXISTS (SELECT 1 FROM memories m WHERE m.org_id = mm.org_id AND m.space_id = mm.space_id
        AND m.state = 'active' AND m.created_at > ${since}
        AND m.type = ANY(coalesce(mm.trigger_types, ARRAY['fact', 'experience', 'note']))
        AND (cardinality(mm.tags) = 0 OR m.tags && mm.tags))`

    const due = (quietSince: Date | null) =>
      sql`mm.refresh_on_new AND ${newerFor(sql.literal("coalesce(mm.last_refreshed_at, mm.created_at)"))}
        AND ${quietSince === null ? sql.literal("true") : sql`NOT ${newerFor(sql`${quietSince}::timestamptz`)}`}
        AND NOT EXISTS (SELECT 1 FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id
          WHERE j.org_id = mm.org_id AND j.space_id = mm.space_id AND j.kind = 'model_refresh'
            AND i.status = 'queued' AND i.request->>'modelId' = mm.model_id)`

    const columns = sql`mm.model_id, mm.space_id, mm.name, mm.query, mm.content, mm.tags, mm.max_tokens, mm.trigger_mode,
      mm.refresh_on_new, mm.trigger_types, mm.last_refreshed_at, mm.refreshed_query, mm.created_at, mm.stale AS marked_stale,
      CASE WHEN mm.last_refreshed_at IS NULL THEN NULL
        ELSE (mm.stale OR ${newerFor(sql.literal("mm.last_refreshed_at"))}) END AS is_stale`

    const find = (space: SpaceRef, modelId: string) =>
      sql`SELECT ${columns} FROM memory_models mm
        WHERE mm.org_id = ${space.orgId} AND mm.space_id = ${space.spaceId} AND mm.model_id = ${modelId}`.pipe(
        Effect.flatMap(decodeModels),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        storeFailure
      )

    const archive = (space: SpaceRef, modelId: string, now: Date) =>
      sql`INSERT INTO memory_model_history (org_id, space_id, model_id, previous_content, changed_at)
        SELECT org_id, space_id, model_id, content, ${now} FROM memory_models
        WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND model_id = ${modelId} AND content IS NOT NULL`

    return {
      find,

      create: (space: SpaceRef, modelId: string, definition: ModelDefinition, now: Date) =>
        sql`INSERT INTO memory_models (org_id, space_id, model_id, name, query, tags, max_tokens, trigger_mode,
            refresh_on_new, trigger_types, created_at, updated_at)
          VALUES (${space.orgId}, ${space.spaceId}, ${modelId}, ${definition.name}, ${definition.query},
            ${[...definition.tags]}, ${definition.maxTokens}, ${definition.mode}, ${definition.refreshOnNew},
            ${definition.types === null ? null : [...definition.types]}, ${now}, ${now})`.pipe(
          Effect.asVoid,
          Effect.catchIf(isUniqueViolation, () => new Conflict({ message: `memory model ${modelId} already exists in this space` })),
          storeFailure,
          Effect.withSpan("ModelRepo.create")
        ),

      list: (space: SpaceRef, page: { limit: number; offset: number; tags: ReadonlyArray<string> }) => {
        const where = page.tags.length === 0
          ? sql`mm.org_id = ${space.orgId} AND mm.space_id = ${space.spaceId}`
          : sql`mm.org_id = ${space.orgId} AND mm.space_id = ${space.spaceId} AND mm.tags && ${[...page.tags]}`
        return Effect.all({
          items: sql`SELECT ${columns} FROM memory_models mm WHERE ${where}
            ORDER BY mm.created_at, mm.model_id LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(Effect.flatMap(decodeModels)),
          total: sql`SELECT count(*) AS n FROM memory_models mm WHERE ${where}`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items, total: total[0]?.n ?? 0 })),
          storeFailure
        )
      },

      /** Changes the definition only; answers whether the model exists. */
      update: (space: SpaceRef, modelId: string, definition: ModelDefinition, now: Date) =>
        sql`UPDATE memory_models SET name = ${definition.name}, query = ${definition.query},
            tags = ${[...definition.tags]}, max_tokens = ${definition.maxTokens}, trigger_mode = ${definition.mode},
            refresh_on_new = ${definition.refreshOnNew},
            trigger_types = ${definition.types === null ? null : [...definition.types]}, updated_at = ${now}
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND model_id = ${modelId}
          RETURNING model_id`.pipe(Effect.flatMap(decodeIds), Effect.map((rows) => rows.length > 0), storeFailure),

      /** Content back to null, the definition kept; what it said goes to the history. */
      clear: (space: SpaceRef, modelId: string, now: Date) =>
        Effect.gen(function*() {
          yield* archive(space, modelId, now)
          const rows = yield* sql`UPDATE memory_models SET content = NULL, refreshed_query = NULL, updated_at = ${now}
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND model_id = ${modelId}
            RETURNING model_id`.pipe(Effect.flatMap(decodeIds))
          return rows.length > 0
        }).pipe(sql.withTransaction, storeFailure),

      delete: (space: SpaceRef, modelId: string) =>
        sql`DELETE FROM memory_models WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND model_id = ${modelId}
          RETURNING model_id`.pipe(
          Effect.flatMap(decodeIds),
          Effect.tap((rows) => rows.length === 0 ? Effect.void : noteErasure(sql, "memory-model")),
          Effect.map((rows) => rows.length > 0),
          sql.withTransaction,
          storeFailure
        ),

      history: (space: SpaceRef, modelId: string) =>
        sql`SELECT previous_content, changed_at FROM memory_model_history
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND model_id = ${modelId} ORDER BY id DESC`.pipe(
          Effect.flatMap(decodeHistory),
          Effect.map((rows) => rows.map((r) => ({ previous_content: r.previous_content, changed_at: r.changed_at.toISOString() }))),
          storeFailure
        ),

      /**
       * A refresh's result, whole: the previous content to the history, the new
       * content, for which query, and `refreshedAt`: the moment the memories
       * it drew on were read (anything recorded later makes it stale). Inside
       * the caller's transaction; answers whether the model still exists.
       */
      writeContent: (space: SpaceRef, modelId: string, content: string, query: string, refreshedAt: Date, now: Date) =>
        Effect.gen(function*() {
          yield* archive(space, modelId, now)
          const rows = yield* sql`UPDATE memory_models SET content = ${content}, refreshed_query = ${query},
              last_refreshed_at = ${refreshedAt}, stale = false, updated_at = ${now}
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND model_id = ${modelId}
            RETURNING model_id`.pipe(Effect.flatMap(decodeIds))
          return rows.length > 0
        }),

      /** Facts a model may have drawn on were deleted, retired or edited: it is stale. Inside the caller's transaction. */
      markStale: (space: SpaceRef, tags: ReadonlyArray<ReadonlyArray<string>>) =>
        sql`UPDATE memory_models SET stale = true
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND last_refreshed_at IS NOT NULL
            AND (cardinality(tags) = 0 OR tags && ${[...new Set(tags.flat())]}::text[])`.pipe(Effect.asVoid),

      /**
       * Models that refresh on new memories, have some, and have no refresh
       * queued; with `quietSince`, only those whose newest such memory was
       * recorded before it (their debounce has passed). The space's models
       * that refresh on new memories are looked up first, and the question
       * asked only of a space that has one: every write wakes this, and
       * planning the whole question took PGlite about 4 ms each time, in
       * spaces with no model at all (docs/footprint.md).
       */
      dueRefreshes: (space: SpaceRef, quietSince: Date | null) =>
        sql`SELECT mm.model_id FROM memory_models mm
          WHERE mm.org_id = ${space.orgId} AND mm.space_id = ${space.spaceId} AND mm.refresh_on_new LIMIT 1`.pipe(
          Effect.flatMap(decodeIds),
          Effect.flatMap((refreshing) =>
            refreshing.length === 0 ? Effect.succeed([]) : sql`SELECT mm.model_id FROM memory_models mm
              WHERE mm.org_id = ${space.orgId} AND mm.space_id = ${space.spaceId} AND ${due(quietSince)}`.pipe(Effect.flatMap(decodeIds))
          ),
          Effect.map((rows) => rows.map((r) => r.model_id)),
          storeFailure
        ),

      /** Spaces with a model due whose debounce has passed (see dueRefreshes): the waker wakes them. */
      spacesWithDueRefreshes: (quietSince: Date) =>
        sql`SELECT DISTINCT mm.org_id, mm.space_id FROM memory_models mm WHERE ${due(quietSince)}`.pipe(
          Effect.flatMap(decodeDue),
          Effect.map((rows): ReadonlyArray<SpaceRef> => rows.map((r) => ({ orgId: r.org_id, spaceId: r.space_id }))),
          storeFailure
        )
    }
  })
}) {}
