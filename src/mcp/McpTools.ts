/**
 * What each MCP tool does, as effects over the same services the HTTP
 * handlers call, always as the caller's Principal (so in its organization).
 */
import { Effect, Option, Schema } from "effect"
import { UnsupportedModel, ValidationError } from "../domain/Errors.ts"
import { MemoryModels } from "../memoryModels/MemoryModels.ts"
import { ModelId } from "../domain/MemoryModels.ts"
import { RecordRequest, RetrieveRequest, ScopeId } from "../domain/Memories.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { UserProfileQuery } from "../domain/Profiles.ts"
import { ReasonRequest } from "../domain/Reason.ts"
import { SpaceId } from "../domain/Spaces.ts"
import { Reason } from "../reason/Reason.ts"
import { SpaceProfiles } from "../reason/SpaceProfiles.ts"
import { UserProfiles } from "../reason/UserProfiles.ts"
import { MemoryService } from "../space/MemoryService.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { Catalog } from "../../services/llm/Catalog.ts"
import { decodeArguments } from "./ToolResult.ts"

/** A single memory type is accepted where the API takes a list. */
const asList = (value: unknown) => (typeof value === "string" ? [value] : value)

const SpaceArgs = Schema.Struct({ space_id: SpaceId })

const UserArgs = Schema.Struct({ space_id: SpaceId, user_id: ScopeId })

/** A memory model: both ids, as the HTTP path takes them. */
const MemoryModelArgs = Schema.Struct({ space_id: SpaceId, model_id: ModelId })

/** The user-profile query as numbers (the HTTP API reads it from the URL as strings); defaults are filled in first. */
const ProfileQuery = Schema.typeSchema(UserProfileQuery)

interface UserProfileInput {
  readonly space_id: string
  readonly user_id: string
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

export class McpTools extends Effect.Service<McpTools>()("engram/mcp/McpTools", {
  dependencies: [MemoryService.Default, Spaces.Default, Reason.Default, SpaceProfiles.Default, UserProfiles.Default, MemoryModels.Default],
  effect: Effect.gen(function*() {
    const memories = yield* MemoryService
    const spaces = yield* Spaces
    const catalog = yield* Catalog
    const reasoning = yield* Reason
    const spaceProfiles = yield* SpaceProfiles
    const userProfiles = yield* UserProfiles
    const memoryModels = yield* MemoryModels

    const record = Effect.fn("Mcp.record")(function*(principal: PrincipalShape, args: object) {
      const { async: _, space_id, ...item } = yield* decodeArguments(RecordRequest, args)
      return yield* memories.record(principal, space_id, item)
    })

    const retrieve = Effect.fn("Mcp.retrieve")(function*(principal: PrincipalShape, args: { readonly memory_type?: unknown }) {
      const request = yield* decodeArguments(
        RetrieveRequest,
        args.memory_type === undefined ? args : { ...args, memory_type: asList(args.memory_type) }
      )
      return yield* memories.retrieve(principal, request)
    })

    const listSpaces = Effect.fn("Mcp.listSpaces")(function*(
      principal: PrincipalShape,
      args: { readonly limit?: number | undefined; readonly offset?: number | undefined }
    ) {
      return yield* spaces.list(principal, { limit: args.limit ?? 100, offset: args.offset ?? 0 })
    })

    /** The catalog entry of a name (or of the default model); an unknown name lists the served ones. */
    const getModel = Effect.fn("Mcp.getModel")(function*(principal: PrincipalShape, args: {
      readonly model?: string | undefined
      readonly space_id?: string | undefined
      readonly model_id?: string | undefined
    }) {
      if (args.space_id !== undefined || args.model_id !== undefined) {
        if (args.model !== undefined) {
          return yield* new ValidationError({ message: "model names a catalog model, space_id and model_id a memory model: send one or the other" })
        }
        const { model: _, ...ids } = args
        const { model_id, space_id } = yield* decodeArguments(MemoryModelArgs, ids)
        return yield* memoryModels.get(principal, space_id, model_id)
      }
      const spec = args.model === undefined ? Option.some(catalog.defaultModel) : catalog.resolve(args.model)
      const entry = Option.flatMap(spec, (m) => Option.fromNullable(catalog.entries.find((e) => e.id === m.id)))
      if (Option.isNone(entry)) {
        return yield* new UnsupportedModel({
          message: `model ${args.model} is not served by this deployment; served: ${catalog.served}`
        })
      }
      return entry.value
    })

    const reason = Effect.fn("Mcp.reason")(function*(principal: PrincipalShape, args: object) {
      return yield* reasoning.reason(principal, yield* decodeArguments(ReasonRequest, args))
    })

    const getProfile = Effect.fn("Mcp.getProfile")(function*(principal: PrincipalShape, args: object) {
      const { space_id } = yield* decodeArguments(SpaceArgs, args)
      return yield* spaceProfiles.get(principal, space_id)
    })

    const getUserProfile = Effect.fn("Mcp.getUserProfile")(function*(principal: PrincipalShape, args: UserProfileInput) {
      const { space_id, user_id, ...rest } = args
      const { space_id: spaceId, user_id: userId } = yield* decodeArguments(UserArgs, { space_id, user_id })
      const query = yield* decodeArguments(ProfileQuery, { ...rest, limit: rest.limit ?? 50, offset: rest.offset ?? 0 })
      return yield* userProfiles.get(principal, spaceId, userId, query)
    })

    return { record, retrieve, listSpaces, getModel, reason, getProfile, getUserProfile }
  })
}) {}
