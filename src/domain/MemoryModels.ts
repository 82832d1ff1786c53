/**
 * Memory models: standing syntheses of a space, each a question the space
 * keeps answering. Content is null until the first refresh completes (and
 * after a clear), and is never partial; create and refresh are jobs of the
 * space, seen through the jobs endpoint.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, ModelError, NoFields, RateLimited } from "./Errors.ts"
import { Tag, TagFilter } from "./Memories.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"
import { Page, Paged, strict, Text } from "./Strict.ts"

/** Lowercase letters and digits in words joined by hyphens, 1 to 64 characters. */
export const ModelId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { message: () => "lowercase letters, digits and single hyphens between them" }),
  Schema.maxLength(64)
)

export const TriggerMemoryType = Schema.Literal("fact", "experience", "note")

export const Trigger = Schema.Struct({
  mode: Schema.Literal("full", "delta"),
  refresh_on_new_memories: Schema.Boolean,
  memory_type: Schema.NullOr(Schema.Array(TriggerMemoryType))
})
export type Trigger = typeof Trigger.Type

export const DEFAULT_TRIGGER: Trigger = { mode: "full", refresh_on_new_memories: false, memory_type: null }
export const DEFAULT_MAX_TOKENS = 2048

export const MaxTokens = Schema.Int.pipe(Schema.between(256, 8192))

const TriggerInput = strict(Schema.Struct({
  mode: Schema.optional(Schema.Literal("full", "delta")),
  refresh_on_new_memories: Schema.optional(Schema.Boolean),
  memory_type: Schema.optional(Schema.NullOr(Schema.Array(TriggerMemoryType).pipe(Schema.minItems(1))))
}))

export const CreateModelRequest = strict(Schema.Struct({
  name: Text(200),
  query: Text(4000),
  model_id: Schema.optional(ModelId),
  tags: Schema.optional(Schema.Array(Tag).pipe(Schema.maxItems(50))),
  max_tokens: Schema.optional(MaxTokens),
  trigger: Schema.optional(TriggerInput)
}))
export type CreateModelRequest = typeof CreateModelRequest.Type

/** The definition only; content is left alone until the next refresh. An empty body is `no_fields`. */
export const PatchModelRequest = strict(Schema.Struct({
  name: Schema.optional(Text(200)),
  query: Schema.optional(Text(4000)),
  tags: Schema.optional(Schema.Array(Tag).pipe(Schema.maxItems(50))),
  max_tokens: Schema.optional(MaxTokens),
  trigger: Schema.optional(TriggerInput)
}))
export type PatchModelRequest = typeof PatchModelRequest.Type

export const MemoryModel = Schema.Struct({
  id: Schema.String,
  space_id: Schema.String,
  name: Schema.String,
  query: Schema.String,
  content: Schema.NullOr(Schema.String),
  tags: Schema.Array(Schema.String),
  max_tokens: Schema.Number,
  trigger: Trigger,
  last_refreshed_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  is_stale: Schema.NullOr(Schema.Boolean)
})
export type MemoryModel = typeof MemoryModel.Type

export const ModelJob = Schema.Struct({ model_id: Schema.String, job_id: Schema.String, status: Schema.Literal("queued") })

export const ModelList = Paged(MemoryModel)

export const ModelListQuery = Schema.Struct({
  ...Page(50, 1000).fields,
  /** Comma-separated: models carrying any of them (parsed and checked as the memory list's filter). */
  tags: Schema.optional(TagFilter)
})

export const ModelHistory = Schema.Struct({
  entries: Schema.Array(Schema.Struct({ previous_content: Schema.String, changed_at: Schema.String })),
  total: Schema.Number
})

const SpacePath = Schema.Struct({ space_id: PathSegment })
const ModelPath = Schema.Struct({ space_id: PathSegment, model_id: PathSegment })

export class MemoryModelsApi extends HttpApiGroup.make("memoryModels")
  .add(
    HttpApiEndpoint.post("create", "/v1/spaces/:space_id/models")
      .setPath(SpacePath)
      .setPayload(CreateModelRequest)
      .addSuccess(ModelJob, { status: 202 })
      .addError(Conflict)
  )
  .add(HttpApiEndpoint.get("list", "/v1/spaces/:space_id/models").setPath(SpacePath).setUrlParams(ModelListQuery).addSuccess(ModelList))
  .add(HttpApiEndpoint.get("get", "/v1/spaces/:space_id/models/:model_id").setPath(ModelPath).addSuccess(MemoryModel))
  .add(
    HttpApiEndpoint.patch("update", "/v1/spaces/:space_id/models/:model_id")
      .setPath(ModelPath)
      .setPayload(PatchModelRequest)
      .addSuccess(MemoryModel)
      .addError(NoFields)
  )
  .add(HttpApiEndpoint.post("refresh", "/v1/spaces/:space_id/models/:model_id/refresh").setPath(ModelPath).addSuccess(ModelJob, { status: 202 }))
  .add(HttpApiEndpoint.post("clear", "/v1/spaces/:space_id/models/:model_id/clear").setPath(ModelPath).addSuccess(MemoryModel))
  .add(HttpApiEndpoint.del("delete", "/v1/spaces/:space_id/models/:model_id").setPath(ModelPath).addSuccess(HttpApiSchema.NoContent))
  .add(HttpApiEndpoint.get("history", "/v1/spaces/:space_id/models/:model_id/history").setPath(ModelPath).addSuccess(ModelHistory))
  .addError(ModelError)
  .addError(Forbidden)
  .addError(RateLimited)
  .middleware(Authentication)
{}
