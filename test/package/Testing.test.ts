/**
 * `engram/testing` and `engram/client` as an Effect user composes them: a
 * node for the suite's scope (`it.layer`), the typed client as a layer, and
 * the documented errors as tagged values.
 */
import { FetchHttpClient } from "@effect/platform"
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { EngramClient, createClient, EngramError } from "../../src/client/index.ts"
import { EngramTestNode } from "../../src/testing/index.ts"

/** The typed client of the suite's node, with its key. */
const Client = Layer.unwrapEffect(
  Effect.map(EngramTestNode, (node) => EngramClient.layer({ baseUrl: node.url, apiKey: node.apiKey }))
).pipe(Layer.provide(FetchHttpClient.layer))

it.layer(EngramTestNode.layer({ env: { CONSOLIDATION: "off" } }), { timeout: 120_000 })("engram/testing: a node for the suite", (it) => {
  it.layer(Client)((it) => {
    it.effect("records and retrieves through the typed client; a missing space fails with NotFound", () =>
      Effect.gen(function*() {
        const engram = yield* EngramClient
        const recorded = yield* engram.memories.record({
          payload: { space_id: "pets", user_id: "alice", content: "Alice adopted a beagle named Biscuit in March 2024." }
        })
        expect("memories" in recorded && recorded.memories.map((m) => m.content)).toEqual(["Alice adopted a beagle named Biscuit in March 2024."])
        const found = yield* engram.memories.retrieve({ payload: { space_id: "pets", query: "What pet does Alice have?", limit: 3, mode: "fast" } })
        expect(found.results[0]?.content).toContain("Biscuit")
        const missing = yield* engram.spaces.get({ path: { space_id: "no-such-space" } }).pipe(
          Effect.as("found"),
          Effect.catchTag("NotFound", (error) => Effect.succeed(`${error._tag} ${error.code}`))
        )
        expect(missing).toBe("NotFound not_found")
      }))

    it.effect("a queued batch is polled to completion by the Promise client; a refusal is an EngramError with status, code and request id", () =>
      Effect.gen(function*() {
        const node = yield* EngramTestNode
        const engram = createClient({ baseUrl: node.url, apiKey: node.apiKey })
        const queued = yield* Effect.promise(() =>
          engram.recordBatch({ space_id: "trips", items: [{ content: "Bob moved to Lisbon in 2021." }, { content: "Bob visits Porto every May." }] })
        )
        const job = yield* Effect.promise(() => engram.waitForJob("trips", queued.job_id, { timeoutMs: 30_000 }))
        expect(job.status).toBe("completed")
        expect(job.items.completed).toBe(2)
        const listed = yield* Effect.promise(() => engram.listMemories("trips"))
        expect(listed.total).toBe(2)
        // A query as a caller writes it: numbers as numbers, the rest filled in as the server fills it.
        const page = yield* Effect.promise(() => engram.listMemories("trips", { limit: 1, offset: 1 }))
        expect({ items: page.items.length, limit: page.limit, offset: page.offset, total: page.total }).toEqual({ items: 1, limit: 1, offset: 1, total: 2 })
        const refused = yield* Effect.promise(() => engram.record({ space_id: "trips", content: "" }).then(() => undefined, (e: unknown) => e))
        expect(refused).toBeInstanceOf(EngramError)
        expect(refused).toMatchObject({ status: 422, code: "validation_error" })
        const stranger = createClient({ baseUrl: node.url, apiKey: "svc_live_not_a_key" })
        const denied = yield* Effect.promise(() => stranger.listSpaces().then(() => undefined, (e: unknown) => e))
        expect(denied).toMatchObject({ status: 401, code: "unauthorized" })
        expect(denied instanceof EngramError && denied.requestId).toMatch(/^req_/)
        // The proxy through the same client: a model this node does not serve is refused with its documented code.
        const unserved = yield* Effect.promise(() =>
          engram.chatCompletions({ model: "no-such-model", messages: [{ role: "user", content: "Hi" }] }, { "X-Svc-Space-Id": "trips" })
            .then(() => undefined, (e: unknown) => e))
        expect(unserved).toBeInstanceOf(EngramError)
        expect(unserved).toMatchObject({ status: 400 })
        expect(unserved instanceof EngramError && unserved.code).toBe("invalid_model")
        // And one it serves (the local engine), in the chat-completions format.
        const answer = yield* Effect.promise(() =>
          engram.chatCompletions({ model: "local", messages: [{ role: "user", content: "Where did Bob move?" }] }, { "X-Svc-Space-Id": "trips" }))
        expect(answer).toMatchObject({ object: "chat.completion", space_id: "trips" })
        expect(answer).toHaveProperty("memories_injected", 2)
        yield* Effect.promise(() => Promise.all([engram.close(), stranger.close()]))
      }))
  })
})
