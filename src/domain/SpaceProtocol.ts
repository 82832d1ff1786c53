/**
 * The Space entity's protocol: every write, recall and edit of a space goes
 * through its entity, the single writer that also owns the space's index.
 * There is one entity per space in the whole cluster; its id is
 * `<org_id>/<space_id>`.
 */
import { Entity } from "@effect/cluster"
import { Rpc } from "@effect/rpc"
import { Schema } from "effect"
import { InternalError, NotFound, ServiceUnavailable } from "./Errors.ts"
import { OrgId, type SpaceRef, SpaceId } from "./Ids.ts"
import { MemoryItem, MemoryState, MemoryType, Metadata, RetrieveItem, StoredMemory, TagsMatch } from "./Memories.ts"

export const spaceEntityId = (space: SpaceRef) => `${space.orgId}/${space.spaceId}`
export const parseSpaceEntityId = (entityId: string): SpaceRef => {
  const slash = entityId.indexOf("/")
  return { orgId: OrgId.make(entityId.slice(0, slash)), spaceId: SpaceId.make(entityId.slice(slash + 1)) }
}

/** One write as the entity takes it; queued writes are stored in this shape and decoded with it on resume. */
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

/**
 * A webhook event a caller hands to the space with a change, queued in the
 * change's own transaction (a rule's `security.policy_triggered` for the
 * redaction it made to a write or an edit): reported if and only if the
 * change is made.
 */
export const OutboxEventPayload = Schema.Struct({ eventType: Schema.String, operationId: Schema.String, body: Schema.String })

/** Events that travel with a change; none by default. */
const withEvents = Schema.optionalWith(Schema.Array(OutboxEventPayload), { default: () => [] })

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
  state: Schema.optional(MemoryState),
  events: withEvents
})
export type MemoryEdit = typeof MemoryEdit.Type

/**
 * The space does not exist (never created, or deleted). The entity knows for
 * certain, since deletion goes through it; callers turn this into the
 * documented 403 or 404, or create the space for a write.
 */
export class SpaceMissing extends Schema.TaggedError<SpaceMissing>()("SpaceMissing", { message: Schema.String }) {}

/** What any call into a space can fail with: it does not exist, the store is down (503), or a bug (500, logged). */
export const SpaceFailure = Schema.Union(SpaceMissing, ServiceUnavailable, InternalError)

export const SpaceEntity = Entity.make("Space", [
  Rpc.make("Write", { payload: { items: Schema.Array(WriteItem), events: withEvents }, success: Schema.Array(WriteResult), error: SpaceFailure }),
  Rpc.make("Recall", { payload: Recall, success: RecallResult, error: SpaceFailure }),
  Rpc.make("Edit", { payload: MemoryEdit, success: MemoryItem, error: Schema.Union(NotFound, SpaceFailure) }),
  Rpc.make("Forget", { payload: { memoryId: Schema.String }, success: Schema.Boolean, error: SpaceFailure }),
  /** Deletes a document with its memories; answers whether it existed. */
  Rpc.make("DeleteDocument", { payload: { documentId: Schema.String }, success: Schema.Boolean, error: SpaceFailure }),
  /**
   * Queues writes as a job of this space: the entity stores the job's rows
   * (with the rules' events, in one transaction) and answers once they are
   * durable, then drains them. Positions in `refused` fail from the start
   * with their reason (a rule blocked them).
   */
  Rpc.make("Enqueue", {
    payload: {
      jobId: Schema.String,
      items: Schema.Array(WriteItem),
      receivedAt: Schema.Number,
      refused: Schema.Array(Schema.Tuple(Schema.Int, Schema.String)),
      events: withEvents
    },
    success: Schema.Void,
    error: Schema.Union(ServiceUnavailable, InternalError)
  }),
  /** There may be work due (queued writes): the entity checks the store and runs it. Sent by the waker. */
  Rpc.make("Wake", { success: Schema.Void }),
  /** Deletes the space, everything in it, and the entity's index; answers whether it existed. */
  Rpc.make("Delete", { success: Schema.Boolean, error: Schema.Union(ServiceUnavailable, InternalError) })
])
