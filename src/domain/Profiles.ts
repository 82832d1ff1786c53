/**
 * Profiles: the space profile (mission and disposition, which shape synthesis)
 * and per-user profiles (what a space holds about one user_id, and asking it).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Forbidden, InsufficientRole, ModelThrottled, ModelUnavailable, NotFound, RateLimited, SpaceNotFound, UnsupportedModel, ValidationError } from "./Errors.ts"
import { MemoryItem, MemoryType, ScopeId, Usage } from "./Memories.ts"
import { Authentication } from "./Principal.ts"
import { Depth, ModelName, Query } from "./Reason.ts"
import { PathSegment, SafeString } from "./SafeText.ts"
import { Page, strict } from "./Strict.ts"

/** 1 to 5; 3 is the default of every trait. */
export const Trait = Schema.Int.pipe(Schema.between(1, 5))

export const Disposition = Schema.Struct({ skepticism: Trait, literalism: Trait, empathy: Trait })
export type Disposition = typeof Disposition.Type

export const DEFAULT_DISPOSITION: Disposition = { skepticism: 3, literalism: 3, empathy: 3 }

/** What the store keeps per space (kind `profile`); the name is the space's own. */
export const StoredSpaceProfile = Schema.Struct({ mission: Schema.String, disposition: Disposition })
export type StoredSpaceProfile = typeof StoredSpaceProfile.Type

export const DEFAULT_PROFILE: StoredSpaceProfile = { mission: "", disposition: DEFAULT_DISPOSITION }

export const SpaceProfile = Schema.Struct({
  space_id: Schema.String,
  name: Schema.String,
  mission: Schema.String,
  disposition: Disposition
})
export type SpaceProfile = typeof SpaceProfile.Type

/** PUT replaces the profile: an omitted mission, disposition or trait returns to its default. */
export const PutSpaceProfile = strict(Schema.Struct({
  mission: Schema.optional(SafeString.pipe(Schema.maxLength(4000))),
  disposition: Schema.optional(strict(Schema.Struct({
    skepticism: Schema.optional(Trait),
    literalism: Schema.optional(Trait),
    empathy: Schema.optional(Trait)
  })))
}))
export type PutSpaceProfile = typeof PutSpaceProfile.Type

/** A memory in the profile view: the memory list item, with `entities` as one comma-separated string. */
export const ProfileMemory = Schema.Struct({ ...MemoryItem.fields, entities: Schema.String })
export type ProfileMemory = typeof ProfileMemory.Type

export const UserProfileQuery = Schema.Struct({
  ...Page(50, 200).fields,
  memory_type: Schema.optional(MemoryType),
  format: Schema.optional(Schema.Literal("results", "block")),
  context_max_tokens: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)))
})
export type UserProfileQuery = typeof UserProfileQuery.Type

export const UserProfile = Schema.Struct({
  space_id: Schema.String,
  user_id: Schema.String,
  memory_count: Schema.Number,
  first_seen: Schema.NullOr(Schema.String),
  last_active: Schema.NullOr(Schema.String),
  memories: Schema.Array(ProfileMemory),
  context: Schema.NullOr(Schema.String),
  token_estimate: Schema.NullOr(Schema.Number)
})
export type UserProfile = typeof UserProfile.Type

export const AskRequest = strict(Schema.Struct({
  query: Query,
  model: Schema.optional(ModelName),
  depth: Schema.optional(Depth)
}))
export type AskRequest = typeof AskRequest.Type

export const AskResponse = Schema.Struct({
  space_id: Schema.String,
  user_id: Schema.String,
  insights: Schema.NullOr(Schema.String),
  usage: Schema.NullOr(Usage)
})
export type AskResponse = typeof AskResponse.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })
const UserPath = Schema.Struct({ space_id: PathSegment, user_id: ScopeId })

export class ProfilesApi extends HttpApiGroup.make("profiles")
  .add(
    HttpApiEndpoint.get("getSpaceProfile", "/v1/spaces/:space_id/profile")
      .setPath(SpacePath)
      .addSuccess(SpaceProfile)
      .addError(NotFound)
  )
  .add(
    HttpApiEndpoint.put("putSpaceProfile", "/v1/spaces/:space_id/profile")
      .setPath(SpacePath)
      .setPayload(PutSpaceProfile)
      .addSuccess(SpaceProfile)
      .addError(NotFound)
      .addError(InsufficientRole)
  )
  .add(
    HttpApiEndpoint.del("deleteSpaceProfile", "/v1/spaces/:space_id/profile")
      .setPath(SpacePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .addError(InsufficientRole)
  )
  .add(
    HttpApiEndpoint.get("getUserProfile", "/v1/spaces/:space_id/users/:user_id/profile")
      .setPath(UserPath)
      .setUrlParams(UserProfileQuery)
      .addSuccess(UserProfile)
      .addError(SpaceNotFound)
      .addError(ValidationError)
  )
  .add(
    HttpApiEndpoint.post("askUser", "/v1/spaces/:space_id/users/:user_id/ask")
      .setPath(UserPath)
      .setPayload(AskRequest)
      .addSuccess(AskResponse)
      .addError(SpaceNotFound)
      .addError(UnsupportedModel)
      .addError(ModelThrottled)
      .addError(ModelUnavailable)
      .addError(BadRequest)
  )
  .addError(Forbidden)
  .addError(RateLimited)
  .middleware(Authentication)
{}
