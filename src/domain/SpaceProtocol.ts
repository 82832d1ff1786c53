/**
 * The Space entity's protocol: every write, recall and edit of a space goes
 * through its entity, the single writer that also owns the space's index.
 * Entity id: `<org_id>/<space_id>`.
 */
import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Schema } from "effect"
import { NotFound, ServiceUnavailable } from "./Errors.ts"
import { MemoryItem, MemoryState, MemoryType, Metadata, RetrieveItem, StoredMemory, TagsMatch } from "./Memories.ts"

export const spaceEntityId = (orgId: string, spaceId: string) => `${orgId}/${spaceId}`
export const parseSpaceEntityId = (entityId: string) => {
  const slash = entityId.indexOf("/")
  return { orgId: entityId.slice(0, slash), spaceId: entityId.slice(slash + 1) }
}

export const WriteItem = Schema.Struct({
  content: Schema.String,
  documentId: Schema.NullOr(Schema.String),
  eventTime: Schema.String,
  userId: Schema.NullOr(Schema.String),
  agentId: Schema.NullOr(Schema.String),
  sessionId: Schema.NullOr(Schema.String),
  memberId: Schema.NullOr(Schema.String),
  metadata: Metadata,
  tags: Schema.Array(Schema.String),
  context: Schema.String
})
export type WriteItem = typeof WriteItem.Type

export const WriteResult = Schema.Struct({ documentId: Schema.String, memories: Schema.Array(StoredMemory) })

export const Recall = Schema.Struct({
  query: Schema.String,
  limit: Schema.Number,
  memoryTypes: Schema.NullOr(Schema.Array(MemoryType)),
  userId: Schema.NullOr(Schema.String),
  agentId: Schema.NullOr(Schema.String),
  sessionId: Schema.NullOr(Schema.String),
  tags: Schema.NullOr(Schema.Array(Schema.String)),
  tagsMatch: TagsMatch,
  minScore: Schema.NullOr(Schema.Number),
  preferObservations: Schema.Boolean,
  asOf: Schema.NullOr(Schema.String),
  queryTime: Schema.NullOr(Schema.String),
  mode: Schema.Literal("accurate", "fast"),
  full: Schema.Boolean
})
export type Recall = typeof Recall.Type

export const Exclusion = Schema.Struct({
  memory_id: Schema.String,
  reason: Schema.Literal("dedup", "min_score", "limit", "budget", "candidate_cap", "rerank_rank", "engine_budget"),
  detail: Schema.String
})
export type Exclusion = typeof Exclusion.Type

export const RecallResult = Schema.Struct({
  results: Schema.Array(RetrieveItem),
  excluded: Schema.Array(Exclusion),
  queryTokens: Schema.Number
})
export type RecallResult = typeof RecallResult.Type

export const MemoryEdit = Schema.Struct({
  memoryId: Schema.String,
  text: Schema.optional(Schema.String),
  context: Schema.optional(Schema.String),
  metadata: Schema.optional(Metadata),
  tags: Schema.optional(Schema.Array(Schema.String)),
  state: Schema.optional(MemoryState)
})

export const SpaceEntity = Entity.make("Space", [
  Rpc.make("Write", { payload: { items: Schema.Array(WriteItem) }, success: Schema.Array(WriteResult), error: ServiceUnavailable }),
  Rpc.make("Recall", { payload: Recall, success: RecallResult, error: ServiceUnavailable }),
  Rpc.make("Edit", { payload: MemoryEdit, success: MemoryItem, error: Schema.Union(NotFound, ServiceUnavailable) }),
  Rpc.make("Forget", { payload: { memoryId: Schema.String }, success: Schema.Boolean, error: ServiceUnavailable }),
  Rpc.make("Drain", { success: Schema.Void }),
  Rpc.make("Reset", { success: Schema.Void })
])
