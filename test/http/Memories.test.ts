import type { WireBody } from "../../src/client/Wire.ts"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, callRaw, createKey, signup, waitForJob } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

/** An organization with a key and an empty space. */
const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = yield* createKey(owner.token)
  const spaceId = unique("mem")
  expect((yield* call("POST", "/v1/spaces", { token: key.raw_key, json: { space_id: spaceId } })).status).toBe(201)
  return { owner, key: key.raw_key, spaceId }
})

const record = (key: string, body: WireBody<"POST", "/v1/record">) => call("POST", "/v1/record", { token: key, json: body })

eachProfile("memories: writes, jobs, edits", (it) => {
  it.effect("a synchronous record answers the stored memories with their ids and types", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const reply = yield* record(key, {
        space_id: spaceId,
        content: "Caroline: I went to the LGBTQ support group yesterday and it was powerful.",
        timestamp: "2023-05-08T13:56:00Z",
        metadata: { dia_id: "D1:3" },
        tags: ["support"]
      })
      expect(reply.status).toBe(200)
      expect(reply.body.status).toBe("completed")
      expect(reply.body.space_id).toBe(spaceId)
      expect(reply.body.document_id).toMatch(/^doc_/)
      expect(reply.body.memories.length).toBeGreaterThanOrEqual(1)
      const memory = reply.body.memories[0]
      expect(memory.memory_id).toMatch(/^mem_/)
      expect(memory.memory_type).toBe("fact")
      expect(memory.content).toContain("Caroline")
      expect(memory.entities).toContain("Caroline")
      expect(reply.body.usage.input_tokens).toBeGreaterThan(0)

      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(listed.status).toBe(200)
      expect(listed.body.total).toBe(reply.body.memories.length)
      const item = listed.body.items.find((m: any) => m.id === memory.memory_id)
      expect(item).toMatchObject({ type: "fact", state: "active", metadata: { dia_id: "D1:3" }, tags: ["support"] })
      expect(item.date).toBe("2023-05-08T13:56:00.000Z")
    }))

  it.effect("the record answer, the list and retrieve report the same event times for a memory", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const reply = yield* record(key, { space_id: spaceId, content: "Odile planted tulips along the canal.", timestamp: "2024-03-02T09:30:00Z" })
      expect(reply.status).toBe(200)
      const stored = reply.body.memories[0]
      expect(stored).toMatchObject({ occurred_start: "2024-03-02T09:30:00.000Z", occurred_end: "2024-03-02T09:30:00.000Z" })
      const listed = (yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })).body.items
        .find((m: any) => m.id === stored.memory_id)
      const found = (yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "tulips canal" } })).body.results
        .find((r: any) => r.memory_id === stored.memory_id)
      for (const view of [listed, found]) {
        expect({ occurred_start: view.occurred_start, occurred_end: view.occurred_end, created_at: view.created_at }).toEqual({
          occurred_start: stored.occurred_start,
          occurred_end: stored.occurred_end,
          created_at: stored.created_at
        })
      }
    }))

  it.effect("content with no information is stored as nothing", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const reply = yield* record(key, { space_id: spaceId, content: "ok thanks!" })
      expect(reply.status).toBe(200)
      expect(reply.body.memories).toEqual([])
    }))

  it.effect("writes create their space on first use; another organization's space is forbidden", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const fresh = unique("auto")
      expect((yield* record(key, { space_id: fresh, content: "Melanie paints sunsets by the lake." })).status).toBe(200)
      expect((yield* call("GET", `/v1/spaces/${fresh}`, { token: key })).status).toBe(200)

      const other = yield* signup("other")
      const otherKey = yield* createKey(other.token)
      for (
        const [method, path, json] of [
          ["POST", "/v1/record", { space_id: spaceId, content: "Intrusion attempt about Paris." }],
          ["POST", "/v1/record", { space_id: spaceId, content: "x y z", async: true }],
          ["POST", "/v1/record/batch", { space_id: spaceId, items: [{ content: "Batch intrusion about Rome." }] }],
          ["POST", "/v1/memories", { space_id: spaceId, content: "Legacy intrusion about Oslo." }],
          ["POST", "/v1/retrieve", { space_id: spaceId, query: "anything" }],
          ["POST", "/v1/search", { space_id: spaceId, query: "anything" }],
          ["GET", `/v1/spaces/${spaceId}/memories`, undefined],
          ["GET", `/v1/spaces/${spaceId}/jobs/job_x`, undefined],
          ["DELETE", `/v1/spaces/${spaceId}/jobs/job_x`, undefined],
          ["PATCH", `/v1/spaces/${spaceId}/memories/mem_x`, { text: "changed" }],
          ["DELETE", `/v1/spaces/${spaceId}/memories/mem_x`, undefined],
          ["GET", `/v1/spaces/${spaceId}/memories/mem_x/history`, undefined]
        ] as const
      ) {
        const reply = yield* callRaw(method, path, { token: otherKey.raw_key, ...(json ? { json } : {}) })
        expect(reply.status, `${method} ${path}`).toBe(403)
        expect(reply.body.error.code).toBe("forbidden")
      }
      const mine = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(mine.body.total).toBe(0)
    }))

  it.effect("async record and batch return a job that completes with every item stored", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const queued = yield* record(key, { space_id: spaceId, content: "Jon opened a dance studio in Boston.", async: true })
      expect(queued.status).toBe(202)
      expect(queued.body).toMatchObject({ space_id: spaceId, status: "queued", items: 1 })
      expect(queued.body.job_id).toMatch(/^job_/)
      const done = yield* waitForJob(key, spaceId, queued.body.job_id)
      expect(done.status).toBe("completed")
      expect(done.items).toEqual({ total: 1, queued: 0, completed: 1, failed: 0, cancelled: 0 })
      expect(done.memory_ids.length).toBeGreaterThanOrEqual(1)

      const items = Array.from({ length: 12 }, (_, i) => ({ content: `Gina sold ${i + 2} handmade scarves at the market.`, metadata: { n: i } }))
      const batch = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } })
      expect(batch.status).toBe(202)
      expect(batch.body.items).toBe(12)
      const finished = yield* waitForJob(key, spaceId, batch.body.job_id)
      expect(finished.status).toBe("completed")
      expect(finished.items.completed).toBe(12)
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=100`, { token: key })
      expect(listed.body.items.filter((m: any) => m.text.includes("scarves"))).toHaveLength(12)
    }))

  it.effect("batch limits: 1 to 100 items", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const none = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: [] } })
      expect(none.status).toBe(422)
      const many = Array.from({ length: 101 }, () => ({ content: "x" }))
      const tooMany = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: many } })
      expect(tooMany.status).toBe(422)
      const missing = yield* call("POST", "/v1/record/batch", { token: key, offContract: { space_id: spaceId } })
      expect(missing.status).toBe(400)
    }))

  it.effect("cancelling a job drops the items not yet started", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      // A first batch keeps the space busy, so the second one is still queued when it is cancelled.
      const ahead = Array.from({ length: 100 }, (_, i) => ({ content: `Lena repaired bicycle number ${i} in her garage in Utrecht.` }))
      yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: ahead } })
      const items = Array.from({ length: 100 }, (_, i) => ({ content: `Nate adopted turtle number ${i} from the shelter in Denver.` }))
      const batch = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } })
      const cancelled = yield* call("DELETE", `/v1/spaces/${spaceId}/jobs/${batch.body.job_id}`, { token: key })
      expect(cancelled.status).toBe(200)
      expect(cancelled.body.items.queued).toBe(0)
      const final = yield* waitForJob(key, spaceId, batch.body.job_id)
      expect(final.items.total).toBe(100)
      expect(final.items.completed + final.items.cancelled).toBe(100)
      expect(final.items.cancelled).toBeGreaterThan(0)
      expect(final.status).toBe(final.items.completed > 0 ? "completed" : "cancelled")
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=1000`, { token: key })
      expect(listed.body.items.filter((m: any) => m.text.includes("turtle")).length).toBe(final.memory_ids.length)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/jobs/job_nope`, { token: key })).status).toBe(404)
    }))

  it.effect("legacy POST /v1/memories answers memory_id, status and usage", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const reply = yield* call("POST", "/v1/memories", {
        token: key,
        json: { space_id: spaceId, content: "Andrew hikes in the Rockies every summer.", context: "profile", metadata: { src: "import" } }
      })
      expect(reply.status).toBe(200)
      expect(Object.keys(reply.body).sort()).toEqual(["memory_id", "status", "usage"])
      expect(reply.body.status).toBe("completed")
      expect(Object.keys(reply.body.usage).sort()).toEqual(["input_tokens", "output_tokens"])
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(listed.body.items[0]).toMatchObject({ id: reply.body.memory_id, context: "profile", metadata: { src: "import" } })
      const missing = yield* call("POST", "/v1/memories", { token: key, offContract: { space_id: spaceId } })
      expect(missing.status).toBe(400)
    }))

  it.effect("reusing a document_id replaces that document's memories", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const first = yield* record(key, { space_id: spaceId, document_id: "trip-notes", content: "Evan visited Lisbon in April." })
      const second = yield* record(key, { space_id: spaceId, document_id: "trip-notes", content: "Evan visited Porto in June." })
      expect(second.body.document_id).toBe("trip-notes")
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      const texts = listed.body.items.map((m: any) => m.text).join(" | ")
      expect(texts).toContain("Porto")
      expect(texts).not.toContain("Lisbon")
      const oldId = first.body.memories[0].memory_id
      const retrieved = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "Lisbon" } })
      expect(retrieved.body.results.map((r: any) => r.memory_id)).not.toContain(oldId)
      // The replaced memory is gone for edits too: a 404, not a failure on a missing row.
      const edited = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${oldId}`, { token: key, json: { text: "Evan visited Faro." } })
      expect(edited.status).toBe(404)
      expect(edited.body.error.code).toBe("not_found")
    }))

  it.effect("edit, retire, restore, history and delete", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const stored = yield* record(key, { space_id: spaceId, content: "Maria volunteers at the homeless shelter on Sundays." })
      const id = stored.body.memories[0].memory_id
      const path = `/v1/spaces/${spaceId}/memories/${id}` as const
      const original = stored.body.memories[0].content

      const edited = yield* call("PATCH", path, { token: key, json: { text: "Maria volunteers at the animal shelter on Sundays.", tags: ["volunteering"] } })
      expect(edited.status).toBe(200)
      expect(edited.body).toMatchObject({ id, text: "Maria volunteers at the animal shelter on Sundays.", tags: ["volunteering"], state: "active" })
      const found = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "animal shelter" } })
      expect(found.body.results[0].memory_id).toBe(id)

      const retired = yield* call("PATCH", path, { token: key, json: { state: "retired" } })
      expect(retired.body.state).toBe("retired")
      const hidden = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "animal shelter" } })
      expect(hidden.body.results.map((r: any) => r.memory_id)).not.toContain(id)
      const activeList = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(activeList.body.items.map((m: any) => m.id)).not.toContain(id)
      const retiredList = yield* call("GET", `/v1/spaces/${spaceId}/memories?state=retired`, { token: key })
      expect(retiredList.body.items.map((m: any) => m.id)).toEqual([id])

      yield* call("PATCH", path, { token: key, json: { state: "active" } })
      const back = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "animal shelter" } })
      expect(back.body.results[0].memory_id).toBe(id)

      const history = yield* callRaw("GET", `${path}/history`, { token: key })
      expect(history.status).toBe(200)
      expect(history.body.entries.map((e: any) => e.change)).toEqual(["restored", "retired", "edited", "created"])
      expect(history.body.entries[2].previous.text).toBe(original)
      expect(history.body.entries[3].previous).toBeNull()
      for (const entry of history.body.entries) expect(Date.parse(entry.changed_at)).not.toBeNaN()

      const bad = yield* call("PATCH", path, { token: key, offContract: { state: "deleted" } })
      expect(bad.status).toBe(422)
      const unknown = yield* call("PATCH", path, { token: key, offContract: { colour: "red" } })
      expect(unknown.status).toBe(422)

      expect((yield* call("DELETE", path, { token: key })).status).toBe(204)
      const gone = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "animal shelter" } })
      expect(gone.body.results.map((r: any) => r.memory_id)).not.toContain(id)
      expect((yield* call("DELETE", path, { token: key })).status).toBe(404)
      expect((yield* callRaw("GET", `${path}/history`, { token: key })).status).toBe(404)
      expect((yield* call("PATCH", path, { token: key, json: { text: "x" } })).status).toBe(404)
    }))

  it.effect("a turn that only asks is kept as a question: listed with state=question, never recalled, made active by an edit", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const asked = yield* record(key, { space_id: spaceId, content: "What is Marta allergic to?", user_id: "u-marta" })
      expect(asked.status).toBe(200)
      const questionId = asked.body.memories[0].memory_id
      const told = yield* record(key, { space_id: spaceId, content: "Marta is allergic to peanuts and shellfish.", user_id: "u-marta" })
      const factId = told.body.memories[0].memory_id
      // A statement with a question after it states something: an ordinary fact.
      const mixed = yield* record(key, { space_id: spaceId, content: "I moved to Porto with Marta. Any tips for the rain?" })
      const mixedId = mixed.body.memories[0].memory_id
      // The write's answer says which it became.
      expect(asked.body.memories.map((m: any) => m.state)).toEqual(["question"])
      expect(told.body.memories.map((m: any) => m.state)).toEqual(["active"])
      expect(mixed.body.memories.every((m: any) => m.state === "active")).toBe(true)

      const retrieve = (query: string) =>
        call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query, mode: "accurate" } }).pipe(
          Effect.map((r) => r.body.results.map((m: any) => m.memory_id))
        )
      const recalled = yield* retrieve("What is Marta allergic to?")
      expect(recalled[0]).toBe(factId)
      expect(recalled).not.toContain(questionId)
      expect(yield* retrieve("Marta Porto rain tips")).toContain(mixedId)

      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(listed.body.items.map((m: any) => m.id)).toEqual(expect.arrayContaining([factId, mixedId]))
      expect(listed.body.items.map((m: any) => m.id)).not.toContain(questionId)
      const questions = yield* call("GET", `/v1/spaces/${spaceId}/memories?state=question`, { token: key })
      expect(questions.body.items.map((m: any) => [m.id, m.state, m.text])).toEqual([[questionId, "question", "What is Marta allergic to?"]])
      const all = yield* call("GET", `/v1/spaces/${spaceId}/memories?state=all`, { token: key })
      expect(all.body.items.map((m: any) => m.id)).toContain(questionId)

      // An edit cannot make a memory a question; it can make a question an ordinary, recalled memory.
      const path = `/v1/spaces/${spaceId}/memories/${questionId}` as const
      expect((yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${factId}`, { token: key, offContract: { state: "question" } })).status).toBe(422)
      const promoted = yield* call("PATCH", path, { token: key, json: { state: "active" } })
      expect(promoted.body.state).toBe("active")
      expect(yield* retrieve("What is Marta allergic to?")).toContain(questionId)
      const history = yield* callRaw("GET", `${path}/history`, { token: key })
      expect(history.body.entries.map((e: any) => e.change)).toEqual(["restored", "created"])
      expect(history.body.entries[0].previous.state).toBe("question")
    }))

  it.effect("an empty edit is 400 no_fields and writes no history", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const stored = yield* record(key, { space_id: spaceId, content: "Ivo bakes sourdough bread every Saturday." })
      const id = stored.body.memories[0].memory_id
      const path = `/v1/spaces/${spaceId}/memories/${id}` as const

      const empty = yield* call("PATCH", path, { token: key, json: {} })
      expect(empty.status).toBe(400)
      expect(empty.body.error.code).toBe("no_fields")
      expect(empty.body.error.message).toBe("send at least one field to change: text, context, metadata, tags or state")
      expect(empty.body.error.request_id).toBe(empty.headers["x-request-id"])
      // A null is a malformed field, not an absent one.
      expect((yield* call("PATCH", path, { token: key, offContract: { text: null } })).status).toBe(422)

      const history = yield* callRaw("GET", `${path}/history`, { token: key })
      expect(history.body.entries.map((e: any) => e.change)).toEqual(["created"])
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(listed.body.items.find((m: any) => m.id === id)).toMatchObject({ text: stored.body.memories[0].content, tags: [] })

      // One field is enough, and it is recorded.
      expect((yield* call("PATCH", path, { token: key, json: { tags: ["bread"] } })).status).toBe(200)
      const after = yield* callRaw("GET", `${path}/history`, { token: key })
      expect(after.body.entries.map((e: any) => e.change)).toEqual(["edited", "created"])
    }))
})
