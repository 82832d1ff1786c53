/** A space's chat settings, kept as one settings document; all nulls until set. */
import { Clock, Effect, Option, Schema } from "effect"
import { type ChatSettingsValues, ChatSettingsValues as Values, type PutChatSettings } from "../domain/ChatSettings.ts"
import { UnsupportedModel } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { Catalog } from "../../services/llm/Catalog.ts"
import { SettingsRepo } from "../../services/store/SettingsRepo.ts"
import { Spaces } from "../spaces/Spaces.ts"

export const UNSET: ChatSettingsValues = { memory_limit: null, memory_token_budget: null, auto_record: null, memory: null, chat_model: null }

export class ChatSettingsService extends Effect.Service<ChatSettingsService>()("engram/proxy/ChatSettings", {
  dependencies: [SettingsRepo.Default, Spaces.Default],
  effect: Effect.gen(function*() {
    const repo = yield* SettingsRepo
    const spaces = yield* Spaces
    const catalog = yield* Catalog
    const decode = Schema.decodeUnknownOption(Values)

    /** The stored values of a space the caller may use (no space check). */
    const values = (orgId: string, spaceId: string) =>
      repo.get(orgId, spaceId, "chat").pipe(Effect.map((raw) => Option.getOrElse(Option.flatMap(raw, decode), () => UNSET)))

    return {
      values,
      get: (principal: PrincipalShape, spaceId: string) =>
        spaces.get(principal, spaceId).pipe(
          Effect.zipRight(values(principal.orgId, spaceId)),
          Effect.map((v) => ({ space_id: spaceId, ...v }))
        ),
      put: Effect.fn("ChatSettings.put")(function*(principal: PrincipalShape, spaceId: string, body: PutChatSettings) {
        yield* spaces.get(principal, spaceId)
        let chatModel: string | null = null
        if (body.chat_model !== undefined && body.chat_model !== null) {
          const spec = catalog.resolve(body.chat_model)
          if (Option.isNone(spec)) {
            return yield* new UnsupportedModel({ message: `model '${body.chat_model}' is not served by this deployment; served: ${catalog.served}` })
          }
          chatModel = spec.value.id
        }
        const next: ChatSettingsValues = {
          memory_limit: body.memory_limit ?? null,
          memory_token_budget: body.memory_token_budget ?? null,
          auto_record: body.auto_record ?? null,
          memory: body.memory ?? null,
          chat_model: chatModel
        }
        yield* repo.put(principal.orgId, spaceId, "chat", next, new Date(yield* Clock.currentTimeMillis))
        return { space_id: spaceId, ...next }
      }),
      reset: (principal: PrincipalShape, spaceId: string) =>
        spaces.get(principal, spaceId).pipe(Effect.zipRight(repo.delete(principal.orgId, spaceId, "chat")))
    }
  })
}) {}
