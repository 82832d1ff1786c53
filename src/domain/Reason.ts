/**
 * Reason: a synthesized answer across a space's memories, by a catalog model,
 * and the space's reason settings (its default model). Wire shapes and the group.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Forbidden, ModelThrottled, ModelUnavailable, NotFound, RateLimited, UnsupportedModel } from "./Errors.ts"
import { Usage } from "./Memories.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment, SafeString } from "./SafeText.ts"
import { SpaceId } from "./Spaces.ts"
import { strict } from "./Strict.ts"

/** A model name as callers send it: a full id, a short name or a tier. */
export const ModelName = SafeString.pipe(Schema.minLength(1), Schema.maxLength(200))

/**
 * How much work one pass does: `quick` one recall and one model call,
 * `standard` a wider recall that also follows the entities of the first,
 * `thorough` wider still, then a second model call that reviews the draft.
 */
export const Depth = Schema.Literal("quick", "standard", "thorough")
export type Depth = typeof Depth.Type

export const Query = SafeString.pipe(Schema.minLength(1), Schema.maxLength(10_000))

export const ReasonRequest = strict(Schema.Struct({
  space_id: SpaceId,
  query: Query,
  model: Schema.optional(ModelName),
  depth: Schema.optional(Depth)
}))
export type ReasonRequest = typeof ReasonRequest.Type

export const ReasonResponse = Schema.Struct({
  insights: Schema.String,
  model: Schema.String,
  usage: Usage
})
export type ReasonResponse = typeof ReasonResponse.Type

/** The space's reason default: a resolved full model id, or null for the platform default. */
export const ReasonSettings = Schema.Struct({ space_id: Schema.String, model: Schema.NullOr(Schema.String) })
export type ReasonSettings = typeof ReasonSettings.Type

/** PUT replaces the record: an omitted or null `model` returns the space to the platform default. */
export const PutReasonSettings = strict(Schema.Struct({ model: Schema.optional(Schema.NullOr(ModelName)) }))
export type PutReasonSettings = typeof PutReasonSettings.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })

export class ReasonApi extends HttpApiGroup.make("reason")
  .add(
    HttpApiEndpoint.post("reason", "/v1/reason")
      .setPayload(ReasonRequest)
      .addSuccess(ReasonResponse)
      .addError(UnsupportedModel)
      .addError(ModelThrottled)
      .addError(ModelUnavailable)
      .addError(BadRequest)
  )
  .add(HttpApiEndpoint.get("getSettings", "/v1/spaces/:space_id/reason-settings").setPath(SpacePath).addSuccess(ReasonSettings))
  .add(
    HttpApiEndpoint.put("putSettings", "/v1/spaces/:space_id/reason-settings")
      .setPath(SpacePath)
      .setPayload(PutReasonSettings)
      .addSuccess(ReasonSettings)
      .addError(UnsupportedModel)
  )
  .add(
    HttpApiEndpoint.del("deleteSettings", "/v1/spaces/:space_id/reason-settings")
      .setPath(SpacePath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .addError(RateLimited)
  .middleware(Authentication)
{}
