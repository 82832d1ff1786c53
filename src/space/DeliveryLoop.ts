/**
 * The space's webhook deliveries: its third loop. Deliveries are rows (the
 * outbox the writer fills in the transaction of each change), so the loop
 * holds no state a crash could lose: it claims what is due (counting the
 * attempt before sending), sends each to its webhook as the webhook is now,
 * signed over the exact bytes, and settles it: any 2xx completes it; anything
 * else is retried on WEBHOOK_RETRY_SCHEDULE, measured from the attempt, until
 * the attempts run out and it is `failed`. Then it sleeps until the next
 * delivery is due, on the space's clock. An attempt cut short by a crash is
 * counted as one that got no answer, and the schedule goes on from there.
 */
import { Clock, Duration, Effect, Either, Fiber, Queue } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import type { ClaimedRow, DeliveryRow, Settlement, WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { signature, type WebhookSecretsShape } from "../../services/webhooks/Signing.ts"
import { DELIVERY_TIMEOUT, type WebhookTransportShape } from "../../services/webhooks/Transport.ts"
import type { LoopStep } from "./SupervisedLoop.ts"
import { wallClock } from "./SpaceClock.ts"

/** Deliveries claimed per step, and sent at once. */
export const CLAIM = 64
const CONCURRENCY = 8

/**
 * A step waits this long (real time) before claiming, so the deliveries of a
 * burst of writes go out together: fewer statements on the store the writes
 * need, at the cost of a few tenths of a second of delay.
 */
export const GATHER = Duration.millis(150)

/** Writes go first: a step waits for the writer to be quiet this long, but never more than MAX_YIELD. */
const QUIET = 50
const MAX_YIELD = 500

/** How often the loop looks for attempts a crash cut short (and at activation). */
const RECOVER_EVERY = Duration.seconds(10)

/**
 * A delivery left `processing` longer than this was cut short by a crash (a
 * step's own attempts are all settled before the next step looks).
 */
export const STUCK_AFTER = Duration.sum(DELIVERY_TIMEOUT, Duration.seconds(20))

/** What an attempt's outcome means for the delivery, by the schedule. */
export const settlement = (
  schedule: ReadonlyArray<Duration.Duration>,
  attempts: number,
  attemptedAt: Date,
  outcome: { readonly status: number } | { readonly error: string }
): Settlement => {
  const responseStatus = "status" in outcome ? outcome.status : null
  if (responseStatus !== null && responseStatus >= 200 && responseStatus < 300) {
    return { status: "completed", responseStatus, error: null, nextRetryAt: null }
  }
  const error = "error" in outcome ? outcome.error : `the receiver answered ${responseStatus}`
  const delay = schedule[attempts]
  return delay === undefined
    ? { status: "failed", responseStatus, error, nextRetryAt: null }
    : { status: "pending", responseStatus, error, nextRetryAt: new Date(attemptedAt.getTime() + Duration.toMillis(delay)) }
}

export const makeDelivery = (deps: {
  readonly space: SpaceRef
  readonly webhooks: WebhookRepo
  readonly transport: WebhookTransportShape
  readonly secrets: WebhookSecretsShape
  /** WEBHOOK_RETRY_SCHEDULE: the delay before each attempt; its length is the number of attempts. */
  readonly schedule: ReadonlyArray<Duration.Duration>
  /** The space's clock (SpaceClock): attempt times and retry timers. */
  readonly clock: Clock.Clock
  /** Milliseconds since the space's last write finished. */
  readonly quietFor: Effect.Effect<number>
}) =>
  Effect.gen(function*() {
    const { clock, schedule, secrets, space, transport, webhooks } = deps
    const signal = yield* Queue.sliding<void>(1)
    const scope = yield* Effect.scope
    let timer: Fiber.RuntimeFiber<void> | undefined
    let recoveredAt = Number.NEGATIVE_INFINITY
    const now = () => new Date(clock.unsafeCurrentTimeMillis())

    /** An attempt a crash cut short: it got no answer as far as anyone knows. */
    const recover = Effect.gen(function*() {
      const cutoff = clock.unsafeCurrentTimeMillis() - Duration.toMillis(STUCK_AFTER)
      const stuck = (yield* webhooks.interrupted(space)).filter((row: DeliveryRow) => (row.last_attempt_at?.getTime() ?? 0) <= cutoff)
      yield* webhooks.settle(stuck.map((row) => ({
        deliveryId: row.delivery_id,
        settlement: settlement(schedule, row.attempts, row.last_attempt_at ?? now(), {
          error: "the attempt was cut short (the node stopped); it may or may not have arrived"
        })
      })))
      return stuck.length
    })

    /**
     * One attempt, sent whole: an idle timeout or a shutdown waits for it (at
     * most the 10 s timeout). Answers how it settles; the step stores the
     * settlements of its attempts together.
     */
    const attempt = (row: ClaimedRow) =>
      Effect.gen(function*() {
        const attemptedAt = row.last_attempt_at ?? now()
        const secret = yield* Effect.either(secrets.open(row.secret_sealed))
        const outcome = Either.isLeft(secret)
          ? { error: secret.left.message }
          : yield* transport.post(row.current_url, {
            "content-type": "application/json",
            "user-agent": "Engram-Webhooks/1",
            "x-svc-event": row.event_type,
            "x-svc-signature": signature(secret.right, row.body),
            "x-svc-delivery": row.delivery_id
          }, row.body).pipe(Effect.catchAll((failure) => Effect.succeed({ error: failure.message })))
        const settled = settlement(schedule, row.attempts, attemptedAt, outcome)
        yield* Effect.annotateCurrentSpan({ status: settled.status, response_status: settled.responseStatus ?? 0 })
        return { deliveryId: row.delivery_id, settlement: settled }
      }).pipe(
        Effect.withSpan("Space.deliver.attempt", {
          attributes: { delivery_id: row.delivery_id, event_type: row.event_type, attempt: row.attempts }
        }),
        Effect.uninterruptible
      )

    /** Sleeps until the next delivery is due (a sooner wake-up, a new write's, comes through the signal). */
    const scheduleNext = Effect.gen(function*() {
      const next = yield* webhooks.nextDue(space, Duration.toMillis(STUCK_AFTER))
      if (timer !== undefined) yield* Fiber.interrupt(timer)
      timer = undefined
      if (next._tag === "None") return
      const wait = next.value.getTime() - clock.unsafeCurrentTimeMillis()
      if (wait <= 0) return yield* Queue.offer(signal, undefined)
      timer = yield* clock.sleep(Duration.millis(wait)).pipe(
        Effect.zipRight(Queue.offer(signal, undefined)),
        Effect.asVoid,
        Effect.forkIn(scope)
      )
    })

    let continuing = false
    const step = Effect.gen(function*() {
      // A round starts after a short gathering pause; a round with more to send goes straight on.
      // The pauses that pace the loop against the writes are wall time, whatever clock the space's timers run on.
      if (!continuing) yield* wallClock.sleep(GATHER)
      continuing = false
      // Delivery never slows the writes: while they stream in, it waits for a pause (at most MAX_YIELD).
      for (let waited = 0; (yield* deps.quietFor) < QUIET && waited < MAX_YIELD; waited += QUIET) {
        yield* wallClock.sleep(Duration.millis(QUIET))
      }
      const startedAt = yield* wallClock.currentTimeMillis
      const recovering = startedAt - recoveredAt >= Duration.toMillis(RECOVER_EVERY)
      const recovered = recovering ? yield* recover : 0
      if (recovering) recoveredAt = yield* wallClock.currentTimeMillis
      const claimed = yield* webhooks.claim(space, now(), CLAIM)
      const settled = yield* Effect.forEach(claimed, attempt, { concurrency: CONCURRENCY })
      yield* webhooks.settle(settled)
      yield* Effect.annotateCurrentSpan({
        deliveries: claimed.length,
        completed: settled.filter((o) => o.settlement.status === "completed").length,
        recovered
      })
      const firstAttempts = claimed.filter((row) => row.attempts === 1)
      const lagMs = firstAttempts.length === 0
        ? 0
        : Math.max(...firstAttempts.map((row) => (row.last_attempt_at?.getTime() ?? 0) - row.created_at.getTime()))
      if (claimed.length === CLAIM) {
        continuing = true
        return { more: true, lagMs } satisfies LoopStep
      }
      yield* scheduleNext
      return { more: false, lagMs } satisfies LoopStep
    })

    return {
      /** Deliveries were queued, or the waker saw some due: look now. */
      nudge: Queue.offer(signal, undefined).pipe(Effect.asVoid),
      signal: Queue.take(signal),
      step
    }
  })
