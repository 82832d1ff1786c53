/**
 * Feedback from members: stored with its sender (the member signed in, or
 * the creator of the key), at most 10 an hour per member. Free.
 */
import { Clock, Duration, Effect, FiberRef } from "effect"
import { Cache, cacheDown } from "../../services/cache/Cache.ts"
import { FeedbackRepo } from "../../services/store/FeedbackRepo.ts"
import { TooManyAttempts } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { CurrentMeterReport } from "./Metering.ts"
import { newId } from "../identity/Ids.ts"

export const FEEDBACK_PER_HOUR = 10

export class Feedback extends Effect.Service<Feedback>()("engram/metering/Feedback", {
  dependencies: [FeedbackRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* FeedbackRepo
    const cache = yield* Cache
    return {
      send: (principal: PrincipalShape, body: { readonly category: "bug" | "idea" | "other"; readonly message: string; readonly page?: string | undefined }) =>
        Effect.gen(function*() {
          const sender = principal.userId === "" ? `key:${principal.orgId}` : principal.userId
          const decision = yield* cache.slidingWindow(`feedback:${principal.orgId}:${sender}`, FEEDBACK_PER_HOUR, Duration.hours(1)).pipe(
            Effect.mapError(cacheDown)
          )
          if (!decision.allowed) {
            const report = yield* FiberRef.get(CurrentMeterReport)
            report.retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
            return yield* new TooManyAttempts({
              message: `at most ${FEEDBACK_PER_HOUR} feedback messages an hour per member; try again in ${report.retryAfterSeconds} s`
            })
          }
          yield* repo.insert({
            feedbackId: newId("fb"),
            orgId: principal.orgId,
            userId: principal.userId === "" ? null : principal.userId,
            category: body.category,
            message: body.message,
            page: body.page ?? null,
            at: new Date(yield* Clock.currentTimeMillis)
          })
          return { status: "received" as const }
        }).pipe(Effect.withSpan("Feedback.send"))
    }
  })
}) {}
