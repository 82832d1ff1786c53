/**
 * A space whose entity passivated (idle past SPACE_IDLE_SECONDS) drops its
 * in-memory index; the next message rebuilds it from the store, and it
 * answers exactly as before.
 */
import { expect } from "@effect/vitest"
import { Duration, Effect, Metric } from "effect"
import { spaceActivations, spacesActive } from "../../src/space/SpaceEntity.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const activations = Metric.value(spaceActivations).pipe(Effect.map((state) => state.count))
const active = Metric.value(spacesActive).pipe(Effect.map((state) => state.value))

eachProfile("a passivated space", (it) => {
  it.effect("is rebuilt on the next call and answers exactly as before", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `idle-${Date.now()}`
      for (const content of [
        "Ines: I visited Montreal for the jazz festival.",
        "Hugo: I cooked lentil soup for the neighbours.",
        "Ines: My sister lives in Quebec City.",
        "Hugo: The jazz records I bought were scratched."
      ]) {
        expect((yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content } })).status).toBe(200)
      }
      const ask = call("POST", "/v1/retrieve", {
        token: key,
        json: { space_id: spaceId, query: "Which city did Ines visit for the jazz festival?", limit: 4 }
      }).pipe(Effect.map((reply) => reply.body.results.map((r: any) => [r.memory_id, r.relevance_score, r.content])))

      const before = yield* ask
      expect(before.length).toBeGreaterThan(0)
      expect(before[0][2]).toContain("Montreal")
      const activatedBefore = yield* activations
      expect(yield* active).toBeGreaterThan(0)

      // Idle past the configured time (1 s here): the entity is passivated and its index dropped.
      let waited = 0
      while ((yield* active) > 0 && waited < 15_000) {
        yield* Effect.sleep(Duration.millis(250))
        waited += 250
      }
      expect(yield* active).toBe(0)

      const after = yield* ask
      expect(yield* activations).toBe(activatedBefore + 1)
      expect(after).toEqual(before)
    }))
}, { spaceIdleTime: Duration.seconds(1) })
