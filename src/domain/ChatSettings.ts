/**
 * Chat settings: a space's defaults for the proxy's memory tunables. Null
 * means unset (falls through to the platform default); PUT replaces the whole
 * record, DELETE clears it.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound, UnsupportedModel } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { ModelName } from "./Reason.ts"
import { PathSegment } from "./SafeText.ts"
import { strict } from "./Strict.ts"

export const MemoryLimit = Schema.Int.pipe(Schema.between(1, 20))
export const MemoryTokenBudget = Schema.Int.pipe(Schema.between(1, 1_000_000))

export const ChatSettingsValues = Schema.Struct({
  memory_limit: Schema.NullOr(MemoryLimit),
  memory_token_budget: Schema.NullOr(MemoryTokenBudget),
  auto_record: Schema.NullOr(Schema.Boolean),
  memory: Schema.NullOr(Schema.Boolean),
  /** A resolved full model id. */
  chat_model: Schema.NullOr(Schema.String)
})
export type ChatSettingsValues = typeof ChatSettingsValues.Type

export const ChatSettings = Schema.Struct({ space_id: Schema.String, ...ChatSettingsValues.fields })
export type ChatSettings = typeof ChatSettings.Type

/** Omitted fields are cleared; `chat_model` takes a name, tier or full id and is stored resolved. */
export const PutChatSettings = strict(Schema.Struct({
  memory_limit: Schema.optional(Schema.NullOr(MemoryLimit)),
  memory_token_budget: Schema.optional(Schema.NullOr(MemoryTokenBudget)),
  auto_record: Schema.optional(Schema.NullOr(Schema.Boolean)),
  memory: Schema.optional(Schema.NullOr(Schema.Boolean)),
  chat_model: Schema.optional(Schema.NullOr(ModelName))
}))
export type PutChatSettings = typeof PutChatSettings.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })

export class ChatSettingsApi extends HttpApiGroup.make("chatSettings")
  .add(HttpApiEndpoint.get("get", "/v1/spaces/:space_id/chat-settings").setPath(SpacePath).addSuccess(ChatSettings))
  .add(
    HttpApiEndpoint.put("put", "/v1/spaces/:space_id/chat-settings")
      .setPath(SpacePath)
      .setPayload(PutChatSettings)
      .addSuccess(ChatSettings)
      .addError(UnsupportedModel)
  )
  .add(HttpApiEndpoint.del("reset", "/v1/spaces/:space_id/chat-settings").setPath(SpacePath).addSuccess(HttpApiSchema.NoContent))
  .addError(NotFound)
  .addError(Forbidden)
  .middleware(Authentication)
{}
