/**
 * What consolidation writes: notes, experiences and summaries (memories with
 * `source_ids`, under the space's reserved `svc:consolidation` document), the
 * facts it settled or found superseded, and a record of every run. Each
 * change is applied inside the caller's transaction (the space's writer).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { MemoryId, SpaceRef } from "../../src/domain/Ids.ts"
import { MemoryId as MemoryIdSchema, OrgId, SpaceId } from "../../src/domain/Ids.ts"
import type { EntityRef, IndexedMemory, Memory } from "../../src/domain/Memory.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { entitiesColumn, INDEX_COLUMNS, IndexedMemoryFromRow, insertedMemory, vectorToBytes } from "./MemoryRows.ts"
import { storeFailure } from "./SqlFailure.ts"

/** The document every synthesis of a space belongs to (the `svc:` prefix is reserved: no caller can write it). */
export const SYNTHESIS_DOCUMENT = "svc:consolidation"

export interface Synthesis {
  readonly id: MemoryId
  readonly type: "note" | "experience" | "summary"
  readonly text: string
  readonly entities: ReadonlyArray<EntityRef>
  readonly metadata: Record<string, unknown>
  readonly tags: ReadonlyArray<string>
  readonly userId: string | null
  readonly agentId: string | null
  readonly eventTime: Date
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly sourceIds: ReadonlyArray<MemoryId>
  readonly embedding: Float32Array | null
  readonly embedder: string | null
}

/** The counts of a run: the data of its `memory.consolidated` event. */
export interface RunRecord {
  readonly engine: string
  readonly facts: number
  readonly created: number
  readonly updated: number
  readonly deleted: number
  readonly error: string | null
  readonly startedAt: Date
}

const decodeIndexed = decodeRows(IndexedMemoryFromRow)
const decodeIds = decodeRows(Schema.Struct({ id: MemoryIdSchema }))
const decodeSettled = decodeRows(Schema.Struct({
  id: MemoryIdSchema,
  consolidated_at: Timestamptz,
  superseded_by: Schema.NullOr(MemoryIdSchema)
}))

/** A fact a run settled, as its row reads now: what `settle` changed of it. */
export interface SettledFact {
  readonly id: MemoryId
  readonly consolidatedAt: Date
  readonly supersededBy: MemoryId | null
}
const RunRow = Schema.Struct({
  id: Int8,
  engine: Schema.String,
  facts: Int8,
  observations_created: Int8,
  observations_updated: Int8,
  observations_deleted: Int8,
  error_message: Schema.NullOr(Schema.String),
  started_at: Timestamptz,
  finished_at: Timestamptz
})
const decodeRuns = decodeRows(RunRow)
const decodeDue = decodeRows(Schema.Struct({ org_id: OrgId, space_id: SpaceId }))

const record = (s: Synthesis, position: number) => ({
  id: s.id,
  type: s.type,
  text: s.text,
  entities: entitiesColumn(s.entities),
  metadata: s.metadata,
  tags: s.tags,
  user_id: s.userId,
  agent_id: s.agentId,
  event_time: s.eventTime.getTime(),
  occurred_start: s.occurredStart?.getTime() ?? null,
  occurred_end: s.occurredEnd?.getTime() ?? null,
  source_ids: s.sourceIds,
  position,
  embedding: s.embedding ? vectorToBytes(s.embedding).toString("base64") : null,
  embedder: s.embedder
})

/**
 * A synthesis as its row reads once inserted at `position` at `now`: a
 * memory as `insertDocuments` stores it (`insertedMemory`), with its sources
 * and settled when written. What `insert` answers without reading the rows
 * back (test/store/InsertedMemories.test.ts compares the two).
 */
const insertedSynthesis = (space: SpaceRef, s: Synthesis, position: number, now: Date): IndexedMemory => ({
  ...insertedMemory(space, SYNTHESIS_DOCUMENT, position, { ...s, state: "active", sourceText: s.text, context: "", sessionId: null, memberId: null }, now),
  sourceIds: [...s.sourceIds],
  consolidatedAt: now
})

/** A synthesis rewritten at `now`: the row as it was, with what `rewrite` sets (the same columns, read alike). */
const rewrittenSynthesis = (before: Memory, after: Synthesis, now: Date): IndexedMemory => ({
  ...insertedSynthesis({ orgId: before.orgId, spaceId: before.spaceId }, after, before.position, now),
  documentId: before.documentId,
  context: before.context,
  type: before.type,
  state: before.state,
  userId: before.userId,
  agentId: before.agentId,
  sessionId: before.sessionId,
  memberId: before.memberId,
  consolidatedAt: before.consolidatedAt,
  supersededBy: before.supersededBy,
  createdAt: before.createdAt
})

export class ConsolidationRepo extends Effect.Service<ConsolidationRepo>()("engram/store/ConsolidationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const indexColumns = sql.literal(INDEX_COLUMNS)

    /** New syntheses, positions from `firstPosition` on, as their rows read (not read back: see `insertedSynthesis`). */
    const insert = (space: SpaceRef, syntheses: ReadonlyArray<Synthesis>, firstPosition: number, now: Date) =>
      Effect.gen(function*() {
        if (syntheses.length === 0) return [] as ReadonlyArray<IndexedMemory>
        yield* sql`INSERT INTO documents (org_id, space_id, document_id, source, text_length, tags, created_at, updated_at)
          VALUES (${space.orgId}, ${space.spaceId}, ${SYNTHESIS_DOCUMENT}, 'memory', 0, '{}', ${now}, ${now})
          ON CONFLICT (org_id, space_id, document_id) DO UPDATE SET updated_at = EXCLUDED.updated_at`
        const rows = syntheses.map((s, i) => record(s, firstPosition + i))
        yield* sql`INSERT INTO memories (id, org_id, space_id, document_id, text, source_text, context,
            type, entities, metadata, tags, user_id, agent_id, event_time, occurred_start, occurred_end, source_ids,
            position, embedding, embedder, consolidated_at, created_at, updated_at)
          SELECT m.id, ${space.orgId}::text, ${space.spaceId}::text, ${SYNTHESIS_DOCUMENT}, m.text, m.text, '', m.type,
            m.entities, m.metadata, m.tags, m.user_id, m.agent_id, to_timestamp(m.event_time / 1000),
            to_timestamp(m.occurred_start / 1000), to_timestamp(m.occurred_end / 1000), m.source_ids, m.position,
            decode(m.embedding, 'base64'), m.embedder, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS m(id text, type text, text text, entities text,
            metadata jsonb, tags text[], user_id text, agent_id text, event_time float8, occurred_start float8,
            occurred_end float8, source_ids text[], position integer, embedding text, embedder text)
          ORDER BY m.position`
        // No 'created' row in the history: a memory's creation is its created_at (MemoryRows.withCreation).
        return syntheses.map((s, i) => insertedSynthesis(space, s, firstPosition + i, now))
      })

    /**
     * Rewrites syntheses (text, sources, entities, times, vector); what each
     * said before goes to its history (which requires each to exist). Answers
     * them as their rows read now, from what was written, not read back.
     */
    const rewrite = (space: SpaceRef, changes: ReadonlyArray<{ readonly before: Memory; readonly after: Synthesis }>, now: Date) =>
      Effect.gen(function*() {
        if (changes.length === 0) return [] as ReadonlyArray<IndexedMemory>
        yield* sql`INSERT INTO memory_history (org_id, space_id, memory_id, change, previous, changed_at)
          SELECT ${space.orgId}, ${space.spaceId}, v.id, 'edited', v.previous, ${now}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(changes.map(({ before }) => ({
            id: before.id,
            previous: { text: before.text, context: before.context, metadata: before.metadata, tags: before.tags, state: before.state }
          })))}::jsonb) AS v(id text, previous jsonb)`
        yield* sql`UPDATE memories m SET text = v.text, source_text = v.text, source_diff = NULL, entities = v.entities,
            metadata = v.metadata, tags = v.tags, event_time = to_timestamp(v.event_time / 1000),
            occurred_start = to_timestamp(v.occurred_start / 1000), occurred_end = to_timestamp(v.occurred_end / 1000),
            source_ids = v.source_ids, embedding = decode(v.embedding, 'base64'), embedder = v.embedder,
            updated_at = ${now}::timestamptz
          FROM jsonb_to_recordset(${JSON.stringify(changes.map(({ after }) => record(after, 0)))}::jsonb)
            AS v(id text, text text, entities text, metadata jsonb, tags text[], event_time float8, occurred_start float8,
              occurred_end float8, source_ids text[], embedding text, embedder text)
          WHERE m.id = v.id AND m.org_id = ${space.orgId} AND m.space_id = ${space.spaceId}
          `
        return changes.map(({ after, before }) => rewrittenSynthesis(before, after, now))
      })

    const remove = (space: SpaceRef, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<{ readonly id: MemoryId }>)
        : sql`DELETE FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ANY(${ids})
            RETURNING id`.pipe(Effect.flatMap(decodeIds))

    /**
     * Facts settled by a run (no longer pending), and facts superseded by
     * newer ones; answers what changed of each (the rest of its row did not).
     */
    const settle = (
      space: SpaceRef,
      considered: ReadonlyArray<MemoryId>,
      superseded: ReadonlyArray<{ readonly fact: MemoryId; readonly by: MemoryId }>,
      now: Date
    ) =>
      Effect.gen(function*() {
        if (superseded.length > 0) {
          yield* sql`UPDATE memories m SET superseded_by = v.by
            FROM jsonb_to_recordset(${JSON.stringify(superseded)}::jsonb) AS v(fact text, by text)
            WHERE m.id = v.fact AND m.org_id = ${space.orgId} AND m.space_id = ${space.spaceId}`
        }
        const ids = [...new Set([...considered, ...superseded.map((s) => s.fact)])]
        if (ids.length === 0) return [] as ReadonlyArray<SettledFact>
        const rows = yield* sql`UPDATE memories SET consolidated_at = coalesce(consolidated_at, ${now}::timestamptz)
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ANY(${ids})
          RETURNING id, consolidated_at, superseded_by`.pipe(Effect.flatMap(decodeSettled))
        return rows.map((row): SettledFact => ({ id: row.id, consolidatedAt: row.consolidated_at, supersededBy: row.superseded_by }))
      })

    /** Facts to consolidate again (the notes built on them went); answers them as they are now. */
    const repend = (space: SpaceRef, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<IndexedMemory>)
        : sql`UPDATE memories SET consolidated_at = NULL
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND id = ANY(${ids}) AND type = 'fact'
            RETURNING ${indexColumns}`.pipe(Effect.flatMap(decodeIndexed))

    const recordRun = (space: SpaceRef, run: RunRecord, now: Date) =>
      sql`INSERT INTO consolidation_runs (org_id, space_id, engine, facts, observations_created, observations_updated,
          observations_deleted, error_message, started_at, finished_at)
        VALUES (${space.orgId}, ${space.spaceId}, ${run.engine}, ${run.facts}, ${run.created}, ${run.updated},
          ${run.deleted}, ${run.error}, ${run.startedAt}, ${now})`.pipe(Effect.asVoid)

    return {
      insert,
      rewrite,
      remove,
      settle,
      repend,
      recordRun,

      /** A space's runs, newest first. */
      runs: (space: SpaceRef, limit = 50) =>
        sql`SELECT id, engine, facts, observations_created, observations_updated, observations_deleted, error_message,
            started_at, finished_at
          FROM consolidation_runs WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
          ORDER BY id DESC LIMIT ${limit}`.pipe(Effect.flatMap(decodeRuns), storeFailure),

      /** How many facts of the space are pending. */
      pendingCount: (space: SpaceRef) =>
        sql`SELECT count(*) AS n FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
          AND type = 'fact' AND consolidated_at IS NULL AND state = 'active'`.pipe(
          Effect.flatMap(decodeRows(Schema.Struct({ n: Int8 }))),
          Effect.map((rows) => rows[0]?.n ?? 0),
          storeFailure
        ),

      /** Spaces with facts pending since before `settledBefore`: the waker's sweep wakes them. */
      spacesWithPending: (settledBefore: Date) =>
        sql`SELECT DISTINCT org_id, space_id FROM memories
          WHERE type = 'fact' AND consolidated_at IS NULL AND state = 'active' AND created_at <= ${settledBefore}`.pipe(
          Effect.flatMap(decodeDue),
          Effect.map((rows): ReadonlyArray<SpaceRef> => rows.map((row) => ({ orgId: row.org_id, spaceId: row.space_id }))),
          storeFailure
        )
    }
  })
}) {}
