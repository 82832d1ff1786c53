/**
 * A memory as the application holds it: decoded from its row at the store
 * boundary, camelCase, with branded ids and real dates. Wire shapes are made
 * from it in `MemoryViews.ts`, once each.
 */
import { Schema } from "effect"
import { MemoryId, OrgId, SpaceId } from "./Ids.ts"
import { MemoryState, MemoryType, Metadata } from "./Memories.ts"

export const EntityRef = Schema.Struct({ name: Schema.String, kind: Schema.String })
export type EntityRef = typeof EntityRef.Type

export const Memory = Schema.Struct({
  id: MemoryId,
  orgId: OrgId,
  spaceId: SpaceId,
  documentId: Schema.String,
  text: Schema.String,
  sourceText: Schema.String,
  context: Schema.String,
  type: MemoryType,
  state: MemoryState,
  entities: Schema.Array(EntityRef),
  metadata: Metadata,
  tags: Schema.Array(Schema.String),
  userId: Schema.NullOr(Schema.String),
  agentId: Schema.NullOr(Schema.String),
  sessionId: Schema.NullOr(Schema.String),
  memberId: Schema.NullOr(Schema.String),
  /** When what it says happened or was said (the write's `timestamp`, default the record time). */
  eventTime: Schema.DateFromSelf,
  occurredStart: Schema.NullOr(Schema.DateFromSelf),
  occurredEnd: Schema.NullOr(Schema.DateFromSelf),
  sourceIds: Schema.Array(MemoryId),
  /** Order of writing within the space. */
  position: Schema.Int,
  /** A fact: when a consolidation run considered it (null while it is pending). */
  consolidatedAt: Schema.NullOr(Schema.DateFromSelf),
  /** A fact: the newer fact that gave the same attribute of the same subject another value. */
  supersededBy: Schema.NullOr(MemoryId),
  createdAt: Schema.DateFromSelf,
  updatedAt: Schema.DateFromSelf
})
export type Memory = typeof Memory.Type

/** A memory with its stored vector, as the space's index loads it. */
export const IndexedMemory = Schema.Struct({
  ...Memory.fields,
  embedding: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  embedder: Schema.NullOr(Schema.String)
})
export type IndexedMemory = typeof IndexedMemory.Type

/** The event time a memory reports: what it says happened, else when it was said. */
export const occurredStart = (memory: Memory): Date => memory.occurredStart ?? memory.eventTime
export const occurredEnd = (memory: Memory): Date => memory.occurredEnd ?? occurredStart(memory)
