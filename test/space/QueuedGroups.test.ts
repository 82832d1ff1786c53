/**
 * Queued items are stored a group per transaction; each item must still end
 * as if the items were processed one by one, in order. The extractor is the
 * local one, except that it fails or stalls on marked content, as a hosted
 * model would.
 */
import type { WireBody } from "../../src/client/Wire.ts"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { ExtractionError, Extractor } from "../../src/ingestion/Extractor.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { Models } from "../../layers/Models.ts"
import { profiles } from "../support/Profiles.ts"
import { testNode } from "../support/TestNode.ts"

const FAIL = "[fail]"
const STALL = "[stall]"
let stalled = 0

/** The configured models, with the extractor marked. */
const markedModels = Layer.effect(
  Extractor,
  Effect.map(Extractor, (local) => ({
    ...local,
    extract: (input) => {
      if (input.content.includes(FAIL)) return Effect.fail(new ExtractionError({ message: "the model is overloaded" }))
      if (input.content.includes(STALL)) {
        return Effect.sync(() => stalled++).pipe(Effect.zipRight(Effect.sleep("1500 millis")), Effect.zipRight(local.extract(input)))
      }
      return local.extract(input)
    }
  }))
).pipe(Layer.provideMerge(Models))

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `groups-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
  return { key, spaceId }
})

const batch = (key: string, spaceId: string, items: WireBody<"POST", "/v1/record/batch">["items"]) =>
  call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } }).pipe(
    Effect.tap((reply) => expect(reply.status).toBe(202)),
    Effect.map((reply) => reply.body.job_id as string)
  )

const waitForJob = (key: string, spaceId: string, jobId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })
      if (job.body.status !== "queued" && job.body.status !== "processing") return job.body
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage("job did not finish")
  })

/** The stored facts' texts: notes a consolidation run may have made meanwhile neither replace nor join them. */
const texts = (key: string, spaceId: string, query = "") =>
  call("GET", `/v1/spaces/${spaceId}/memories?limit=100&type=fact&prefer_observations=false${query}`, { token: key }).pipe(
    Effect.map((reply) => reply.body.items.map((m: any) => m.text as string).sort())
  )

for (const profile of profiles) {
  layer(testNode(profile.infrastructure(markedModels)), { excludeTestServices: true, timeout: Duration.minutes(2) })(
    `queued items stored in groups [${profile.name}]`,
    (it) => {
      it.effect("of two items of one document in a batch, the later one wins, over what the document held before", () =>
        Effect.gen(function*() {
          const { key, spaceId } = yield* setup
          const before = yield* call("POST", "/v1/record", {
            token: key,
            json: { space_id: spaceId, document_id: "plan", content: "Mia lived in Lisbon." }
          })
          expect(before.status).toBe(200)
          const jobId = yield* batch(key, spaceId, [
            { document_id: "plan", content: "Mia lived in Porto." },
            { content: "Theo bought a red kayak." },
            { document_id: "plan", content: "Mia lived in Rome." }
          ])
          const job = yield* waitForJob(key, spaceId, jobId)
          expect(job.items).toEqual({ total: 3, queued: 0, completed: 3, failed: 0, cancelled: 0 })
          expect(yield* texts(key, spaceId, "&document_id=plan")).toEqual(["Mia lived in Rome."])
          expect(yield* texts(key, spaceId)).toEqual(["Mia lived in Rome.", "Theo bought a red kayak."])

          // The index agrees with the store: replaced memories are gone from retrieval too.
          const retrieved = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "Where did Mia live?" } })
          const found = retrieved.body.results.map((r: any) => r.content as string)
          expect(found).toContain("Mia lived in Rome.")
          expect(found.filter((t: string) => t.includes("Lisbon") || t.includes("Porto"))).toEqual([])
        }))

      it.effect("an item whose extraction fails fails alone; the others of its group are stored", () =>
        Effect.gen(function*() {
          const { key, spaceId } = yield* setup
          const jobId = yield* batch(key, spaceId, [
            { content: "Omar planted tomatoes in the community garden." },
            { content: `Omar repaired the greenhouse. ${FAIL}` },
            { content: "Omar sold jars of chutney at the market." }
          ])
          const job = yield* waitForJob(key, spaceId, jobId)
          expect(job.items).toEqual({ total: 3, queued: 0, completed: 2, failed: 1, cancelled: 0 })
          expect(job.error).toContain("the model is overloaded")
          expect(job.memory_ids).toHaveLength(2)
          expect(yield* texts(key, spaceId)).toEqual([
            "Omar planted tomatoes in the community garden.",
            "Omar sold jars of chutney at the market."
          ])
        }))

      it.effect("items cancelled while their group is being prepared are not stored", () =>
        Effect.gen(function*() {
          const { key, spaceId } = yield* setup
          const already = stalled
          const jobId = yield* batch(key, spaceId, [
            { content: `Priya studied Roman history at night. ${STALL}` },
            { content: "Priya taught chess openings to her nephew." },
            { content: "Priya photographed the night market." }
          ])
          // The group is taken and its first item is being extracted: now cancel the job.
          for (let i = 0; i < 100 && stalled === already; i++) yield* Effect.sleep("20 millis")
          expect(stalled).toBeGreaterThan(already)
          const cancelled = yield* call("DELETE", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })
          expect(cancelled.status).toBe(200)
          expect(cancelled.body.items.cancelled).toBe(3)

          // The space drains in order: once a later batch is stored, the cancelled group's transaction has run.
          const next = yield* waitForJob(key, spaceId, yield* batch(key, spaceId, [{ content: "Priya adopted a rescue dog." }]))
          expect(next.items.completed).toBe(1)
          const job = yield* waitForJob(key, spaceId, jobId)
          expect(job.items).toEqual({ total: 3, queued: 0, completed: 0, failed: 0, cancelled: 3 })
          expect(job.memory_ids).toEqual([])
          expect(yield* texts(key, spaceId)).toEqual(["Priya adopted a rescue dog."])
          const retrieved = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "Priya chess history market" } })
          expect(retrieved.body.results.map((r: any) => r.content)).toEqual(["Priya adopted a rescue dog."])
        }))
    }
  )
}
