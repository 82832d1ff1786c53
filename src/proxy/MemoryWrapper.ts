/**
 * What the three proxy formats share: resolve the tunables and the model,
 * recall memories into a fenced block that follows the system prompt, call the
 * model, and store the turn (user and assistant) back unless auto_record is
 * off. A streamed turn is stored when the stream ends, however it ends, so a
 * dropped connection still keeps what was produced.
 */
import { Clock, Effect, Option, Ref, Stream } from "effect"
import { InvalidModel } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { toSafeText } from "../domain/SafeText.ts"
import { Catalog, type ModelSpec } from "../../services/llm/Catalog.ts"
import type { ChatMessage, ChatRequest, StreamPart } from "../../services/llm/Provider.ts"
import { LanguageModels } from "../models/LanguageModels.ts"
import { Metering } from "../metering/Metering.ts"
import { MemoryService } from "../space/MemoryService.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { ChatSettingsService } from "./ChatSettingsService.ts"
import { DEFAULT_SPACE, type Requested, type Resolved, resolveTunables, spaceOf } from "./Tunables.ts"

/** One proxied turn, whatever wire format it came in. */
export interface ProxyTurn {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly system: string
  readonly model: string | undefined
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  /** Unknown request fields, forwarded to the provider unchanged. */
  readonly extra: Readonly<Record<string, unknown>>
  readonly tunables: Requested
}

export interface Prepared {
  readonly spec: ModelSpec
  readonly request: ChatRequest
  readonly spaceId: string
  readonly memoriesInjected: number
  /** When the turn was taken (Unix seconds): the answer's `created`. */
  readonly createdAt: number
}

const lastUserText = (messages: ReadonlyArray<ChatMessage>) =>
  [...messages].reverse().find((m) => m.role === "user")?.content.trim() ?? ""

export class MemoryWrapper extends Effect.Service<MemoryWrapper>()("engram/proxy/MemoryWrapper", {
  dependencies: [MemoryService.Default, Spaces.Default, ChatSettingsService.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    const catalog = yield* Catalog
    const models = yield* LanguageModels
    const memories = yield* MemoryService
    const spaces = yield* Spaces
    const chatSettings = yield* ChatSettingsService

    const prepare = Effect.fn("Proxy.prepare")(function*(principal: PrincipalShape, turn: ProxyTurn) {
      const spaceId = spaceOf(turn.tunables)
      // `default` is every organization's own space, named or implied.
      yield* spaces.ensure(principal, spaceId, spaceId === DEFAULT_SPACE)
      const settings = yield* chatSettings.values(principal.orgId, spaceId)
      const tunables = resolveTunables(turn.tunables, settings)
      const name = turn.model ?? settings.chat_model ?? undefined
      const spec = name === undefined ? Option.some(catalog.defaultModel) : catalog.resolve(name)
      if (Option.isNone(spec)) {
        return yield* new InvalidModel({ message: `model '${name}' is not served by this deployment; served: ${catalog.served}` })
      }
      yield* Effect.annotateCurrentSpan({ space_id: spaceId, model: spec.value.id })
      const query = lastUserText(turn.messages)
      let recalled: ReadonlyArray<string> = []
      let block = ""
      if (tunables.memory && query !== "") {
        const found = yield* memories.retrieve(principal, {
          space_id: spaceId,
          query,
          limit: tunables.memoryLimit,
          format: "block",
          block_order: tunables.blockOrder,
          ...(tunables.memoryTokenBudget === undefined ? {} : { context_max_tokens: tunables.memoryTokenBudget }),
          ...(tunables.userId === null ? {} : { user_id: tunables.userId }),
          ...(tunables.agentId === null ? {} : { agent_id: tunables.agentId }),
          ...(tunables.sessionId === null ? {} : { session_id: tunables.sessionId })
        })
        recalled = found.results.map((r) => r.content)
        block = found.context ?? ""
      }
      // The operator's instructions come first; the recalled memories follow as a fenced section of data.
      const system = [turn.system, block].filter((part) => part !== "").join("\n\n")
      const prepared: Prepared = {
        spec: spec.value,
        spaceId,
        memoriesInjected: recalled.length,
        createdAt: Math.floor((yield* Clock.currentTimeMillis) / 1000),
        request: {
          system,
          messages: turn.messages,
          memories: recalled,
          maxTokens: turn.maxTokens,
          temperature: turn.temperature,
          extra: turn.extra
        }
      }
      return { prepared, tunables, query }
    })

    /** Stores the user's last message and the answer as one queued (durable) job. */
    const record = (principal: PrincipalShape, tunables: Resolved, spec: ModelSpec, query: string, answer: string) => {
      if (!tunables.autoRecord) return Effect.void
      const scope = {
        ...(tunables.userId === null ? {} : { user_id: tunables.userId }),
        ...(tunables.agentId === null ? {} : { agent_id: tunables.agentId }),
        ...(tunables.sessionId === null ? {} : { session_id: tunables.sessionId })
      }
      // The answer is recorded as the assistant's words, so its "I" is never read as the user's;
      // a model's NUL or broken surrogate would make the store refuse the whole job.
      const items = [
        { role: "user", text: query, speaker: "" },
        { role: "assistant", text: toSafeText(answer).trim(), speaker: "Assistant: " }
      ].filter((turn) => turn.text !== "").map((turn) => ({
        content: `${turn.speaker}${turn.text}`,
        ...scope,
        metadata: { source: "proxy", role: turn.role, model: spec.id }
      }))
      if (items.length === 0) return Effect.void
      return memories.enqueue(principal, tunables.spaceId, items).pipe(
        Effect.asVoid,
        Effect.catchAllCause((cause) => Effect.logError("proxied turn not recorded", cause)),
        Effect.withSpan("Proxy.record")
      )
    }

    return {
      complete: Effect.fn("Proxy.complete")(function*(principal: PrincipalShape, turn: ProxyTurn) {
        const { prepared, query, tunables } = yield* prepare(principal, turn)
        const completion = yield* models.complete(prepared.spec, prepared.request)
        // Billed after the turn: the recall was a search; the model's tokens at its rates.
        yield* metering.chargeTokens(principal.orgId, prepared.spaceId, completion.usage, prepared.spec)
        yield* record(principal, tunables, prepared.spec, query, completion.text)
        return { ...prepared, completion }
      }),

      /**
       * Fails before the first token with a real status; afterwards a failure
       * ends the stream. The turn is recorded when the stream finishes, fails
       * or is interrupted (the client went away), with what was produced.
       */
      stream: Effect.fn("Proxy.stream")(function*(principal: PrincipalShape, turn: ProxyTurn) {
        const { prepared, query, tunables } = yield* prepare(principal, turn)
        const parts = yield* models.stream(prepared.spec, prepared.request)
        const produced = yield* Ref.make("")
        const tracked: Stream.Stream<StreamPart, unknown> = parts.pipe(
          Stream.tap((part) =>
            part._tag === "Delta"
              ? Ref.update(produced, (text) => text + part.text)
              : metering.chargeTokens(principal.orgId, prepared.spaceId, part.usage, prepared.spec)
          ),
          Stream.ensuring(Effect.flatMap(Ref.get(produced), (text) => record(principal, tunables, prepared.spec, query, text)))
        )
        return { ...prepared, parts: tracked }
      })
    }
  })
}) {}
