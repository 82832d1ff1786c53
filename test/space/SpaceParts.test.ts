/**
 * A space is a graph of parts built in the entity's scope (SpaceParts.ts),
 * and a test can put any one of them in with `Layer.succeed` (or leave the
 * loops out) while the rest of the node stays real.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import type { Recall } from "../../src/domain/SpaceProtocol.ts"
import { makeSpaceEvents } from "../../src/space/SpaceEvents.ts"
import { SpaceHub, SpaceIdentity, SpaceRecaller } from "../../src/space/SpaceParts.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { embedded } from "../support/Profiles.ts"
import { testNodeWithParts } from "../support/TestNode.ts"

/** What the replaced recall part was asked. */
const asked: Array<Recall> = []
const cannedRecall = Layer.succeed(SpaceRecaller, (recall: Recall) =>
  Effect.sync(() => {
    asked.push(recall)
    return { results: [], excluded: [], queryTokens: 7 }
  }))

layer(testNodeWithParts(embedded.infrastructure(), { recall: cannedRecall }), { excludeTestServices: true, timeout: Duration.minutes(2) })(
  "a space with its recall part replaced",
  (it) => {
    it.effect("retrieve answers from the replacement; writes still go through the real writer and index", () =>
      Effect.gen(function*() {
        const owner = yield* signup()
        const key = (yield* createKey(owner.token)).raw_key
        const spaceId = `parts-recall-${Date.now()}`
        const stored = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Ilse restores organs in Haarlem." } })
        expect(stored.status).toBe(200)
        const recalled = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "Who restores organs?" } })
        expect(recalled.status).toBe(200)
        // The real recall would find the memory just stored; the replacement answers nothing.
        expect(recalled.body.results).toEqual([])
        expect(asked.map((r) => r.query)).toEqual(["Who restores organs?"])
        const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
        expect(listed.body.items.map((m: { text: string }) => m.text)).toContain("Ilse restores organs in Haarlem.")
      }))
  }
)

/** The events each space published, by space id. */
const published = new Map<string, Array<string>>()
const recordingHub = Layer.scoped(
  SpaceHub,
  Effect.gen(function*() {
    const space = yield* SpaceIdentity
    const hub = yield* makeSpaceEvents(space)
    const seen: Array<string> = []
    published.set(space.spaceId, seen)
    return { ...hub, publish: (event) => Effect.zipRight(Effect.sync(() => seen.push(event._tag)), hub.publish(event)) }
  })
)

layer(testNodeWithParts(embedded.infrastructure(), { hub: recordingHub, loops: Layer.empty }), { excludeTestServices: true, timeout: Duration.minutes(2) })(
  "a space with a recording hub and no loops",
  (it) => {
    it.effect("the writer and the Enqueue call say what happened; with no drain loop a queued job stays queued", () =>
      Effect.gen(function*() {
        const owner = yield* signup()
        const key = (yield* createKey(owner.token)).raw_key
        const spaceId = `parts-hub-${Date.now()}`
        const stored = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Ilse restores organs in Haarlem." } })
        expect(stored.status).toBe(200)
        expect(published.get(spaceId)).toEqual(["Loaded", "FactsChanged", "Recorded"])

        const queued = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: [{ content: "Ilse tunes the organ of St. Bavo." }] } })
        expect(queued.status).toBe(202)
        expect(published.get(spaceId)?.slice(3)).toEqual(["Queued"])
        yield* Effect.sleep("1500 millis")
        const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${queued.body.job_id}`, { token: key })
        expect(job.body.status).toBe("queued")
      }))
  }
)
