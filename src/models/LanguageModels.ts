/**
 * Calls a catalog model through its provider, with what every call needs:
 * the model's requests_per_minute (counted in the shared Cache, so across
 * nodes), a timeout, and retries with exponential backoff on 429, 5xx and
 * connection failures. Provider failures leave as the documented codes.
 */
import { Duration, Effect, FiberRef, Schedule, Stream } from "effect"
import { BadRequest, ModelThrottled, ModelUnavailable, ServiceUnavailable } from "../domain/Errors.ts"
import { Cache, cacheDown } from "../../services/cache/Cache.ts"
import { CurrentMeterReport } from "../metering/Metering.ts"
import * as Anthropic from "../../services/llm/Anthropic.ts"
import type { ModelSpec } from "../../services/llm/Catalog.ts"
import * as OpenAiCompatible from "../../services/llm/OpenAiCompatible.ts"
import { type ChatRequest, type Provider, type StreamPart, UpstreamError } from "../../services/llm/Provider.ts"
import { LocalEngine } from "./LocalEngine.ts"

export type CallFailure = ModelThrottled | ModelUnavailable | BadRequest | ServiceUnavailable

/** What a provider's failure means to our caller. */
export const toWire = (spec: ModelSpec) => (error: UpstreamError): CallFailure => {
  if (error.status === 429) {
    return new ModelThrottled({ message: `${spec.id} is at capacity at its provider; retry with exponential backoff` })
  }
  if (error.status !== undefined && [400, 404, 413, 422].includes(error.status)) {
    return new BadRequest({ message: `the model provider refused the request: ${error.message}` })
  }
  return new ModelUnavailable({ message: `${spec.id} is listed but unreachable: ${error.message}` })
}

/** The window of a model's requests_per_minute. */
const MODEL_WINDOW = Duration.minutes(1)

const backoff = (spec: ModelSpec) =>
  Schedule.exponential(Duration.millis(200), 2).pipe(Schedule.intersect(Schedule.recurs(spec.maxRetries)))

export class LanguageModels extends Effect.Service<LanguageModels>()("engram/models/LanguageModels", {
  effect: Effect.gen(function*() {
    const cache = yield* Cache
    const providers: Record<ModelSpec["provider"], Provider> = {
      local: LocalEngine,
      openai: yield* OpenAiCompatible.make,
      anthropic: yield* Anthropic.make
    }

    /**
     * One slot of the model's per-minute allowance (a sliding window in the
     * shared Cache, so every node counts the same calls), or `model_throttled`
     * with Retry-After.
     */
    const admit = (spec: ModelSpec) =>
      Effect.gen(function*() {
        const decision = yield* cache.slidingWindow(`rpm:${spec.id}`, spec.requestsPerMinute, MODEL_WINDOW).pipe(
          Effect.mapError(cacheDown)
        )
        if (decision.allowed) return
        const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
        const report = yield* FiberRef.get(CurrentMeterReport)
        report.retryAfterSeconds = retryAfter
        return yield* new ModelThrottled({
          message: `${spec.id} is at capacity (${spec.requestsPerMinute} requests per minute); retry after ${retryAfter} s, ` +
            "with exponential backoff"
        })
      })

    const guarded = <A>(spec: ModelSpec, attempt: Effect.Effect<A, UpstreamError>) =>
      attempt.pipe(
        Effect.timeoutFail({
          duration: Duration.millis(spec.timeoutMs),
          onTimeout: () => new UpstreamError({ message: `no answer within ${spec.timeoutMs} ms`, status: undefined, retryable: true })
        }),
        Effect.retry({ schedule: backoff(spec), while: (e) => e.retryable }),
        Effect.mapError(toWire(spec))
      )

    return {
      complete: (spec: ModelSpec, request: ChatRequest) =>
        admit(spec).pipe(
          Effect.zipRight(guarded(spec, providers[spec.provider].complete(spec, request))),
          Effect.withSpan("LanguageModels.complete", { attributes: { model: spec.id } })
        ),
      /** Fails before the first token with the documented codes; a later failure ends the stream. */
      stream: (spec: ModelSpec, request: ChatRequest) =>
        admit(spec).pipe(
          Effect.zipRight(guarded(spec, providers[spec.provider].stream(spec, request))),
          Effect.map((parts): Stream.Stream<StreamPart, CallFailure> => Stream.mapError(parts, toWire(spec))),
          Effect.withSpan("LanguageModels.stream", { attributes: { model: spec.id } })
        )
    }
  })
}) {}
