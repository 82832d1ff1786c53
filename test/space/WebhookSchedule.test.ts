/**
 * The whole default retry schedule on the TestClock: a receiver that always
 * answers 500 gets the attempt at once, then after 5 s, 5 min, 30 min, 2 h
 * and 5 h of the space's clock, never sooner, and then the delivery is
 * `failed` with next_retry_at null and nothing more is sent. Each retry's
 * next_retry_at is its attempt's time plus the schedule's next delay.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { profiles } from "../support/Profiles.ts"
import { certificate, startReceiver } from "../support/Receiver.ts"
import { onTestClock, realSleep } from "../support/TestClockNode.ts"

const transport = WebhookTransport.make({ allowPrivate: true, ca: certificate().cert })
const DEFAULT = [0, 5, 300, 1800, 7200, 18000]

for (const profile of profiles) {
  describe(`webhook retries on the TestClock [${profile.name}]`, () => {
    it.scoped("attempts follow 0, 5 s, 5 min, 30 min, 2 h, 5 h, then the delivery fails", () =>
      onTestClock(profile, { webhookRetrySchedule: DEFAULT.map(Duration.seconds), consolidation: false }, Effect.gen(function*() {
        const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver(() => 500)), (r) => Effect.promise(() => r.close()))
        const owner = yield* signup()
        const key = (yield* createKey(owner.token)).raw_key
        const spaceId = `schedule-${Date.now()}`
        yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })
        const hook = (yield* call("POST", `/v1/spaces/${spaceId}/webhooks`, { token: key, json: { url: receiver.url } })).body
        const delivery = call("GET", `/v1/spaces/${spaceId}/webhooks/${hook.id}/deliveries`, { token: key }).pipe(
          Effect.map((r) => r.body.items[0])
        )
        /** Waits (real time) for the attempt count to reach `n` and the attempt to be settled. */
        const attempted = (n: number) =>
          Effect.gen(function*() {
            for (let waited = 0; waited < 15_000; waited += 50) {
              const d = yield* delivery
              if (d !== undefined && d.attempts === n && d.status !== "processing") return d
              yield* realSleep(50)
            }
            return yield* Effect.dieMessage(`attempt ${n} never came: ${JSON.stringify(yield* delivery)}`)
          })

        const recorded = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Ines restores old typewriters." } })
        expect(recorded.status).toBe(200)
        let last = yield* attempted(1)
        expect(receiver.received).toHaveLength(1)
        for (let n = 2; n <= DEFAULT.length; n++) {
          const delay = DEFAULT[n - 1]!
          expect(last.status).toBe("pending")
          expect(Date.parse(last.next_retry_at) - Date.parse(last.last_attempt_at)).toBe(delay * 1000)
          // One second short of the delay: nothing yet.
          yield* TestClock.adjust(Duration.seconds(delay - 1))
          yield* realSleep(700)
          expect(receiver.received, `before attempt ${n}`).toHaveLength(n - 1)
          yield* TestClock.adjust(Duration.seconds(1))
          last = yield* attempted(n)
          expect(receiver.received).toHaveLength(n)
        }
        expect(last).toMatchObject({ status: "failed", attempts: 6, response_status: 500, next_retry_at: null })
        yield* TestClock.adjust(Duration.hours(48))
        yield* realSleep(1_000)
        expect(receiver.received).toHaveLength(6)
        expect(new Set(receiver.received.map((r) => r.json.operation_id)).size).toBe(1)
      }), transport), { timeout: 120_000 })
  })
}
