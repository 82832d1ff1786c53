/**
 * The space's own timers on the TestClock: a memory model that refreshes on
 * new memories waits for them to settle (MODEL_REFRESH_DEBOUNCE_SECONDS),
 * starts over on each new one, and under a steady stream refreshes at the
 * latest MAX_WAIT debounces after the first; consolidation waits
 * CONSOLIDATION_DELAY_SECONDS after writes settle. The entities and the
 * cluster run on the live clock; only the space's timers (SpaceClock) are
 * virtual, so every delay is adjusted, not waited out.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { MAX_WAIT as CONSOLIDATION_MAX_WAIT } from "../../src/space/ConsolidationLoop.ts"
import { MAX_WAIT } from "../../src/space/RefreshLoop.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { profiles } from "../support/Profiles.ts"
import { onTestClock, realSleep } from "../support/TestClockNode.ts"

const space = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `clock-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const record = (content: string) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, timestamp: "2024-05-01T10:00:00Z" } }).pipe(
      Effect.tap((r) => expect(r.status, r.text).toBe(200))
    )
  const model = (modelId: string) => call("GET", `/v1/spaces/${spaceId}/models/${modelId}`, { token: key }).pipe(Effect.map((r) => r.body))
  /** Waits (real time) until the model has been refreshed since `after`, failing after `within` ms. */
  const refreshedSince = (modelId: string, after: string | null, within = 15_000) =>
    Effect.gen(function*() {
      for (let waited = 0; waited < within; waited += 100) {
        const now = yield* model(modelId)
        if (now.last_refreshed_at !== null && now.last_refreshed_at !== after) return now
        yield* realSleep(100)
      }
      return yield* Effect.dieMessage(`model ${modelId} was not refreshed`)
    })
  /** Gives a wrongly early refresh time to happen, then checks none did. */
  const stillAt = (modelId: string, at: string) =>
    Effect.gen(function*() {
      yield* realSleep(1_500)
      const now = yield* model(modelId)
      expect(now.last_refreshed_at).toBe(at)
      expect(now.is_stale).toBe(true)
    })
  return { key, spaceId, record, model, refreshedSince, stillAt }
})

const DEBOUNCE = 30

for (const profile of profiles) {
  describe(`the space's timers on the TestClock [${profile.name}]`, () => {
    // Consolidation is off here: its notes are new memories too, and would start the debounce over.
    const refreshing = { modelRefreshDebounce: Duration.seconds(DEBOUNCE), consolidation: false }

    it.scoped("refresh_on_new_memories waits for the debounce, and each new memory starts it over", () =>
      onTestClock(profile, refreshing, Effect.gen(function*() {
        const { key, record, refreshedSince, spaceId, stillAt } = yield* space
        yield* record("Tomas: I brew my own beer at home.")
        const created = yield* call("POST", `/v1/spaces/${spaceId}/models`, {
          token: key,
          json: { name: "Hobbies", query: "What are Tomas's hobbies?", model_id: "hobbies", trigger: { refresh_on_new_memories: true } }
        })
        expect(created.status).toBe(202)
        const first = yield* refreshedSince("hobbies", null)
        expect(first.trigger.refresh_on_new_memories).toBe(true)

        yield* record("Tomas: I started climbing at the bouldering gym.")
        yield* TestClock.adjust(Duration.seconds(DEBOUNCE - 1))
        yield* stillAt("hobbies", first.last_refreshed_at)
        // A new memory before the debounce ran out: it starts over.
        yield* record("Tomas: I collect vintage postcards as a hobby.")
        yield* TestClock.adjust(Duration.seconds(DEBOUNCE - 1))
        yield* stillAt("hobbies", first.last_refreshed_at)
        yield* TestClock.adjust(Duration.seconds(1))
        const second = yield* refreshedSince("hobbies", first.last_refreshed_at)
        expect(second.is_stale).toBe(false)
        expect(second.content).toContain("postcards")
        expect(second.content).toContain("climbing")

        // A model that does not refresh on new memories only turns stale.
        yield* call("PATCH", `/v1/spaces/${spaceId}/models/hobbies`, { token: key, json: { trigger: { refresh_on_new_memories: false } } })
        yield* record("Tomas: I learned to juggle three balls.")
        yield* TestClock.adjust(Duration.seconds(DEBOUNCE * MAX_WAIT))
        yield* stillAt("hobbies", second.last_refreshed_at)
      })), { timeout: 90_000 })

    it.scoped("under a steady stream of memories a refresh comes at the latest MAX_WAIT debounces after the first", () =>
      onTestClock(profile, refreshing, Effect.gen(function*() {
        const { key, record, refreshedSince, spaceId, stillAt } = yield* space
        yield* record("Aiko: I paint watercolours of the harbour.")
        yield* call("POST", `/v1/spaces/${spaceId}/models`, {
          token: key,
          json: { name: "Art", query: "What does Aiko paint?", model_id: "art", trigger: { refresh_on_new_memories: true } }
        })
        const first = yield* refreshedSince("art", null)
        const gap = DEBOUNCE * 2 / 3
        const writes = Math.ceil((DEBOUNCE * MAX_WAIT) / gap)
        for (let i = 0; i < writes - 1; i++) {
          yield* record(`Aiko: I painted watercolour number ${i} of the boats.`)
          yield* TestClock.adjust(Duration.seconds(gap))
        }
        // Never quiet for a whole debounce, and the cap not reached yet.
        yield* stillAt("art", first.last_refreshed_at)
        yield* record("Aiko: I painted a watercolour of the lighthouse.")
        yield* TestClock.adjust(Duration.seconds(gap))
        const capped = yield* refreshedSince("art", first.last_refreshed_at)
        expect(capped.content).toContain("lighthouse")
      })), { timeout: 90_000 })

    it.scoped("consolidation runs CONSOLIDATION_DELAY_SECONDS after writes settle, not before", () =>
      onTestClock(profile, { consolidationDelay: Duration.seconds(5) }, Effect.gen(function*() {
        const { key, record, spaceId } = yield* space
        const status = call("GET", `/v1/spaces/${spaceId}/consolidation`, { token: key }).pipe(Effect.map((r) => r.body))
        yield* record("Bruno: I keep bees in the garden behind my house.")
        yield* record("Bruno: My bees in the garden made twelve jars of honey this year.")
        yield* TestClock.adjust(Duration.seconds(4))
        yield* realSleep(1_500)
        const waiting = yield* status
        expect(waiting.pending_facts).toBe(2)
        expect(waiting.runs).toEqual([])
        yield* TestClock.adjust(Duration.seconds(1))
        for (let waited = 0; waited < 15_000; waited += 100) {
          if ((yield* status).runs.length > 0) break
          yield* realSleep(100)
        }
        const done = yield* status
        expect(done.pending_facts).toBe(0)
        expect(done.runs[0]).toMatchObject({ engine: "offline", observations_created: 1, error_message: null })
      })), { timeout: 90_000 })

    it.scoped("under a steady stream of writes consolidation runs at the latest MAX_WAIT delays after the first", () =>
      onTestClock(profile, { consolidationDelay: Duration.seconds(5) }, Effect.gen(function*() {
        const { key, record, spaceId } = yield* space
        const status = call("GET", `/v1/spaces/${spaceId}/consolidation`, { token: key }).pipe(Effect.map((r) => r.body))
        const writes = CONSOLIDATION_MAX_WAIT * 5 / 4
        for (let i = 0; i < writes; i++) {
          yield* record(`Bruno: My bees in the garden made ${i + 2} jars of honey this week.`)
          if (i === writes - 1) {
            yield* realSleep(1_500)
            expect((yield* status).runs).toEqual([])
          }
          yield* TestClock.adjust(Duration.seconds(4))
        }
        // Never quiet for 5 s, 60 s after the first write: consolidated all the same.
        for (let waited = 0; waited < 15_000; waited += 100) {
          if ((yield* status).runs.length > 0) break
          yield* realSleep(100)
        }
        const done = yield* status
        expect(done.runs.length).toBeGreaterThan(0)
        expect(done.runs[0].facts).toBeGreaterThanOrEqual(writes - 1)
      })), { timeout: 90_000 })
  })
}
