/**
 * The `memories` row and its mapping to the domain model, both ways: decoded
 * with Schema when read, and flattened into a record for multi-row inserts.
 */
import type { Statement } from "@effect/sql"
import { Schema } from "effect"
import { MemoryId, type OrgId, type SpaceId, type SpaceRef } from "../../src/domain/Ids.ts"
import { MemoryState, MemoryType, Metadata } from "../../src/domain/Memories.ts"
import { EntityRef, IndexedMemory, Memory } from "../../src/domain/Memory.ts"
import { Bytea, Int8, Timestamptz } from "./Columns.ts"
import { entityKeys } from "./EntityRows.ts"
import { applySourceDiff, sourceDiff } from "./SourceDiff.ts"

/**
 * The entities column: `[["name","kind"],...]` as JSON text, NULL when a
 * memory names none (0017_entities_text).
 */
export const EntitiesColumn = Schema.transform(
  Schema.NullOr(Schema.parseJson(Schema.Array(Schema.Tuple(Schema.String, Schema.String)))),
  Schema.Array(EntityRef),
  {
    strict: true,
    decode: (pairs) => (pairs ?? []).map(([name, kind]) => ({ name, kind })),
    encode: (entities) => (entities.length === 0 ? null : entities.map((e) => [e.name, e.kind] as const))
  }
)
/** Entities as the column holds them, for a record written through jsonb_to_recordset (`entities text`). */
export const entitiesColumn = Schema.encodeSync(EntitiesColumn)

const MemoryColumns = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  space_id: Schema.String,
  document_id: Schema.String,
  text: Schema.String,
  source_text: Schema.String,
  source_diff: Schema.NullOr(Schema.String),
  context: Schema.String,
  type: MemoryType,
  state: MemoryState,
  entities: EntitiesColumn,
  metadata: Metadata,
  tags: Schema.Array(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  member_id: Schema.NullOr(Schema.String),
  event_time: Timestamptz,
  occurred_start: Schema.NullOr(Timestamptz),
  occurred_end: Schema.NullOr(Timestamptz),
  source_ids: Schema.Array(Schema.String),
  position: Int8,
  consolidated_at: Schema.NullOr(Timestamptz),
  superseded_by: Schema.NullOr(Schema.String),
  created_at: Timestamptz,
  updated_at: Timestamptz
})

const toMemory = (row: typeof MemoryColumns.Type): typeof Memory.Encoded => ({
  id: row.id,
  orgId: row.org_id,
  spaceId: row.space_id,
  documentId: row.document_id,
  text: row.text,
  sourceText: row.source_diff === null ? row.source_text : applySourceDiff(row.text, row.source_diff),
  context: row.context,
  type: row.type,
  state: row.state,
  entities: row.entities,
  metadata: row.metadata,
  tags: row.tags,
  userId: row.user_id,
  agentId: row.agent_id,
  sessionId: row.session_id,
  memberId: row.member_id,
  eventTime: row.event_time,
  occurredStart: row.occurred_start,
  occurredEnd: row.occurred_end,
  sourceIds: row.source_ids,
  position: row.position,
  consolidatedAt: row.consolidated_at,
  supersededBy: row.superseded_by,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const fromMemory = (memory: typeof Memory.Encoded): typeof MemoryColumns.Type => ({
  id: memory.id,
  org_id: memory.orgId,
  space_id: memory.spaceId,
  document_id: memory.documentId,
  text: memory.text,
  source_text: memory.sourceText,
  source_diff: null,
  context: memory.context,
  type: memory.type,
  state: memory.state,
  entities: memory.entities,
  metadata: memory.metadata,
  tags: memory.tags,
  user_id: memory.userId,
  agent_id: memory.agentId,
  session_id: memory.sessionId,
  member_id: memory.memberId,
  event_time: memory.eventTime,
  occurred_start: memory.occurredStart,
  occurred_end: memory.occurredEnd,
  source_ids: memory.sourceIds,
  position: memory.position,
  consolidated_at: memory.consolidatedAt,
  superseded_by: memory.supersededBy,
  created_at: memory.createdAt,
  updated_at: memory.updatedAt
})

/** A listed memory (no vector). */
export const MemoryFromRow = Schema.transform(MemoryColumns, Memory, { strict: true, decode: toMemory, encode: fromMemory })

const IndexedColumns = Schema.Struct({
  ...MemoryColumns.fields,
  embedding: Schema.NullOr(Bytea),
  embedder: Schema.NullOr(Schema.String)
})

/** A memory with its vector, as the index loads it. */
export const IndexedMemoryFromRow = Schema.transform(IndexedColumns, IndexedMemory, {
  strict: true,
  decode: (row) => ({ ...toMemory(row), embedding: row.embedding, embedder: row.embedder }),
  encode: (memory) => ({ ...fromMemory(memory), embedding: memory.embedding, embedder: memory.embedder })
})

export const LIST_COLUMNS = `id, org_id, space_id, document_id, text, source_text, source_diff, context, type, state, entities, metadata,
  tags, user_id, agent_id, session_id, member_id, event_time, occurred_start, occurred_end, source_ids, position,
  consolidated_at, superseded_by, created_at, updated_at`
export const INDEX_COLUMNS = `${LIST_COLUMNS}, embedding, embedder`

/** What was said before a change, as memory_history keeps it. */
export const PreviousVersion = Schema.Struct({
  text: Schema.String,
  context: Schema.optionalWith(Schema.String, { default: () => "" }),
  metadata: Schema.optionalWith(Metadata, { default: () => ({}) }),
  tags: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  state: Schema.optionalWith(MemoryState, { default: () => "active" as const })
})

export const HistoryRow = Schema.Struct({
  change: Schema.Literal("created", "edited", "retired", "restored"),
  previous: Schema.NullOr(PreviousVersion),
  changed_at: Timestamptz
})

/**
 * A memory's history (oldest first) with its creation first. The store keeps
 * no row for a creation (it is the memory's created_at: a row per memory for
 * it was a tenth of a space's disk); memories stored before that, or
 * imported with their history, keep the row they have.
 */
export const withCreation = <H extends { readonly change: string }>(
  history: ReadonlyArray<H>,
  createdAt: Date
): ReadonlyArray<H | { readonly change: "created"; readonly previous: null; readonly changed_at: Date }> =>
  history.some((h) => h.change === "created") ? history : [{ change: "created", previous: null, changed_at: createdAt }, ...history]

/** A memory to insert, made by a write before its transaction. */
export interface NewMemory {
  readonly id: MemoryId
  readonly text: string
  readonly sourceText: string
  readonly context: string
  readonly type: MemoryType
  /** `question` for a written turn that only asks; `active` otherwise. */
  readonly state: MemoryState
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
  readonly embedding: Float32Array | null
  readonly embedder: string | null
}

export interface DocumentWrite {
  readonly documentId: string
  readonly source: "custom" | "memory" | "file"
  readonly textLength: number
  readonly tags: ReadonlyArray<string>
  /** An uploaded file's name (source `file`). */
  readonly filename?: string | null | undefined
}

/** The memories of one write, under its document. */
export interface DocumentWrites {
  readonly document: DocumentWrite
  readonly memories: ReadonlyArray<NewMemory>
}

export const vectorToBytes = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength)
export const bytesToVector = (bytes: Uint8Array) => {
  const copy = new Uint8Array(bytes)
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4))
}

/** A memory as one record of a multi-row insert: times in epoch milliseconds, the vector in base64. */
export const memoryRecord = (documentId: string, position: number, m: NewMemory) => {
  const diff = sourceDiff(m.text, m.sourceText)
  return {
  id: m.id,
  document_id: documentId,
  text: m.text,
  // The source as the few edits that make it from the text, when that is shorter (SourceDiff.ts).
  source_text: diff === null ? m.sourceText : "",
  source_diff: diff,
  context: m.context,
  type: m.type,
  state: m.state,
  entities: entitiesColumn(m.entities),
  // A written memory is raw (no sources): the graph counts it by these.
  entity_keys: entityKeys(m.entities),
  metadata: m.metadata,
  tags: m.tags,
  user_id: m.userId,
  agent_id: m.agentId,
  session_id: m.sessionId,
  member_id: m.memberId,
  event_time: m.eventTime.getTime(),
  occurred_start: m.occurredStart?.getTime() ?? null,
  occurred_end: m.occurredEnd?.getTime() ?? null,
  position,
  embedding: m.embedding ? vectorToBytes(m.embedding).toString("base64") : null,
  embedder: m.embedder
  }
}

export const newMemoryId = (random: string) => MemoryId.make(`mem_${random}`)

const utf8 = new TextEncoder()
/** jsonb's order of an object's keys: shorter first (in UTF-8 bytes), then byte by byte. */
const jsonbKeyOrder = (a: string, b: string) => {
  const x = utf8.encode(a)
  const y = utf8.encode(b)
  if (x.length !== y.length) return x.length - y.length
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!
  return 0
}

/** An object's entries as jsonb gives them back: in jsonb's key order, each value likewise. */
const jsonbObject = (entries: Array<[string, unknown]>): Record<string, unknown> => {
  const ordered: Record<string, unknown> = {}
  for (const [key, value] of entries.sort(([a], [b]) => jsonbKeyOrder(a, b))) ordered[key] = asJsonb(value)
  return ordered
}

/** A JSON object as a jsonb column gives it back: its keys (and every nested object's) in jsonb's order. */
const asJsonbObject = (value: Readonly<Record<string, unknown>>): Record<string, unknown> => jsonbObject(Object.entries(value))

/** A JSON value as a jsonb column gives it back: every object's keys in jsonb's order (values are JSON already). */
export const asJsonb = (value: unknown): unknown =>
  Array.isArray(value) ? value.map(asJsonb) : typeof value === "object" && value !== null ? jsonbObject(Object.entries(value)) : value

/**
 * A memory as its row reads once inserted (`memoryRecord` at `position`, at
 * `at`): the record as written, each column's default (never
 * consolidated, no sources), metadata in jsonb's key order, the vector's
 * bytes. What insertDocuments answers without reading the rows back
 * (test/store/InsertedMemories.test.ts compares the two).
 */
export const insertedMemory = (space: SpaceRef, documentId: string, position: number, m: NewMemory, at: Date): IndexedMemory => ({
  id: m.id,
  orgId: space.orgId,
  spaceId: space.spaceId,
  documentId,
  text: m.text,
  sourceText: m.sourceText,
  context: m.context,
  type: m.type,
  state: m.state,
  entities: m.entities.map((entity) => ({ name: entity.name, kind: entity.kind })),
  metadata: asJsonbObject(m.metadata),
  tags: [...m.tags],
  userId: m.userId,
  agentId: m.agentId,
  sessionId: m.sessionId,
  memberId: m.memberId,
  eventTime: m.eventTime,
  occurredStart: m.occurredStart,
  occurredEnd: m.occurredEnd,
  sourceIds: [],
  position,
  consolidatedAt: null,
  supersededBy: null,
  createdAt: at,
  updatedAt: at,
  embedding: m.embedding === null ? null : Buffer.from(vectorToBytes(m.embedding)),
  embedder: m.embedder
})

export type { OrgId, SpaceId }

/**
 * The ids of the facts behind a space's active syntheses (`note` alone, or
 * every type but `fact`), as an uncorrelated subquery: PostgreSQL hashes it
 * once per statement. The correlated form (`EXISTS ... id = ANY(n.source_ids)`
 * per row) rescanned the space for every fact: 20 to 70 s for one page of a
 * 10,000-memory space.
 */
export const factsBehindSyntheses = (sql: Statement.Constructor, space: SpaceRef, synthesis: "note" | "any") =>
  sql`(SELECT unnest(n.source_ids) FROM memories n WHERE n.org_id = ${space.orgId} AND n.space_id = ${space.spaceId}
    AND ${synthesis === "note" ? sql`n.type = 'note'` : sql`n.type <> 'fact'`} AND n.state = 'active')`
