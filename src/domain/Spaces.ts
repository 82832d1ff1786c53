/** Spaces: named memory containers, unique per organization. */
import { Schema } from "effect"
import { SafeString } from "./SafeText.ts"
import { Paged, strict, Text } from "./Strict.ts"

export const SpaceId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, {
    message: () => "must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
  })
)

export const SpaceTypes = [
  { space_type: "general", name: "General", description: "Any mix of facts, notes and documents (the default)." },
  { space_type: "user", name: "User memory", description: "What an assistant learns about the people it serves." },
  { space_type: "agent", name: "Agent memory", description: "An agent's own experience: tasks, tools, outcomes." },
  { space_type: "team", name: "Team knowledge", description: "Shared decisions, conventions and project history." },
  { space_type: "documents", name: "Document store", description: "Uploaded files parsed and chunked for recall." }
] as const

export const SpaceType = Schema.Literal(...SpaceTypes.map((t) => t.space_type))
export type SpaceType = typeof SpaceType.Type

export const SpaceTypeInfo = Schema.Struct({ space_type: SpaceType, name: Schema.String, description: Schema.String })
export const SpaceTypeList = Schema.Struct({ items: Schema.Array(SpaceTypeInfo) })

export const Space = Schema.Struct({
  space_id: Schema.String,
  name: Schema.String,
  space_type: SpaceType,
  description: Schema.String,
  project_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  /** True for a space another organization shares with the caller's (its project is the owner's, not shown). */
  shared: Schema.Boolean
})
export type Space = typeof Space.Type

export const SpaceList = Paged(Space)

export const CreateSpaceRequest = strict(Schema.Struct({
  space_id: Schema.optional(SpaceId),
  name: Schema.optional(Text(200)),
  space_type: Schema.optional(SpaceType),
  description: Schema.optional(SafeString.pipe(Schema.maxLength(2000))),
  /** A project of the caller's organization (404 `not_found` otherwise). */
  project_id: Schema.optional(SafeString.pipe(Schema.minLength(1), Schema.maxLength(64)))
}))
export type CreateSpaceRequest = typeof CreateSpaceRequest.Type
