/**
 * Memory models over HTTP: every endpoint of "Memory models and profile",
 * create and refresh as jobs the space runs, content that answers the
 * standing question from recalled memories only, staleness, delta refreshes,
 * history, the documented errors and isolation between organizations.
 */
import type { WireBody } from "../../src/client/Wire.ts"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `models-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const record = (content: string, timestamp: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, timestamp, ...extra } }).pipe(
      Effect.tap((reply) => expect(reply.status, reply.text).toBe(200)),
      Effect.map((reply) => reply.body.memories.map((m: any) => m.memory_id as string))
    )
  const models = `/v1/spaces/${spaceId}/models` as const
  const create = (json: WireBody<"POST", typeof models>) => call("POST", models, { token: key, json })
  /** A body the contract does not take, to see the refusal. */
  const createOffContract = (json: unknown) => call("POST", models, { token: key, offContract: json })
  const get = (modelId: string) => callRaw("GET", `${models}/${modelId}`, { token: key })
  /** Waits for a job of the space to finish and answers it. */
  const finished = (jobId: string) =>
    Effect.gen(function*() {
      for (let waited = 0; waited < 30_000; waited += 100) {
        const job = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })).body
        if (job.status !== "queued" && job.status !== "processing") return job
        yield* Effect.sleep("100 millis")
      }
      return yield* Effect.dieMessage(`job ${jobId} did not finish`)
    })
  return { owner, key, spaceId, record, models, create, createOffContract, get, finished }
})

eachProfile("memory models", (it) => {
  it.effect("create queues a job whose completion writes a markdown answer from the space's memories, with its sources' dates", () =>
    Effect.gen(function*() {
      const { create, finished, get, record } = yield* setup
      yield* record("Maya: I'm allergic to peanuts and carry an epipen.", "2024-03-02T10:00:00Z")
      yield* record("Maya: I started training for the Berlin marathon.", "2024-04-10T10:00:00Z")
      yield* record("Maya: My favourite food is Thai green curry.", "2024-05-01T10:00:00Z")

      const created = yield* create({ name: "Maya's diet", query: "What should Maya not eat, and what food does she like?" })
      expect(created.status, created.text).toBe(202)
      expect(created.body).toEqual({ model_id: expect.stringMatching(/^[a-z0-9]+(-[a-z0-9]+)*$/), job_id: expect.any(String), status: "queued" })
      expect(created.body.model_id.startsWith("maya-s-diet-")).toBe(true)

      const job = yield* finished(created.body.job_id)
      expect(job.status, JSON.stringify(job)).toBe("completed")
      const model = (yield* get(created.body.model_id)).body
      expect(model).toMatchObject({
        id: created.body.model_id,
        name: "Maya's diet",
        tags: [],
        max_tokens: 2048,
        trigger: { mode: "full", refresh_on_new_memories: false, memory_type: null },
        is_stale: false
      })
      expect(model.last_refreshed_at).not.toBeNull()
      expect(model.content.startsWith("## Maya's diet\n")).toBe(true)
      expect(model.content).toMatch(/peanuts.*\(2024-03-02\)/)
      expect(model.content).toMatch(/Thai green curry.*\(2024-05-01\)/)
      // Nothing it did not recall: the marathon does not answer the question.
      expect(model.content).not.toContain("marathon")
    }))

  it.effect("tags restrict the sources; list pages and filters by tag; max_tokens bounds the content", () =>
    Effect.gen(function*() {
      const { create, finished, get, key, models, record } = yield* setup
      yield* record("Ravi: I work as a nurse at the city hospital.", "2024-01-01T10:00:00Z", { tags: ["work"] })
      yield* record("Ravi: I enjoy working night shifts at the hospital.", "2024-01-02T10:00:00Z", { tags: ["home"] })
      for (let i = 0; i < 60; i++) {
        yield* record(`Ravi: At the hospital I cared for patient number ${i} with a broken arm today.`, "2024-02-01T10:00:00Z", { tags: ["work"] })
      }
      const work = yield* create({ name: "Work", query: "What does Ravi do at the hospital?", model_id: "ravi-work", tags: ["work"], max_tokens: 256 })
      expect(work.body.model_id).toBe("ravi-work")
      yield* create({ name: "Home", query: "What does Ravi enjoy?", model_id: "ravi-home", tags: ["home"] })
      yield* create({ name: "All", query: "Ravi", model_id: "ravi-all" })
      expect((yield* finished(work.body.job_id)).status).toBe("completed")
      const content: string = (yield* get("ravi-work")).body.content
      expect(content).toContain("nurse")
      expect(content).not.toContain("night shifts")
      // About four characters a token: 256 tokens is at most ~1,024 characters, and whole lines only.
      expect(content.length).toBeLessThanOrEqual(1100)
      expect(content.split("\n").slice(1).every((line) => /^- .+ \(\d{4}-\d{2}-\d{2}\)$/.test(line))).toBe(true)

      const page = (yield* callRaw("GET", `${models}?limit=2&offset=1`, { token: key })).body
      expect(page).toMatchObject({ total: 3, limit: 2, offset: 1 })
      expect(page.items.map((m: any) => m.id)).toEqual(["ravi-home", "ravi-all"])
      expect((yield* call("GET", models, { token: key })).body.limit).toBe(50)
      const tagged = (yield* callRaw("GET", `${models}?tags=home,other`, { token: key })).body
      expect(tagged.items.map((m: any) => m.id)).toEqual(["ravi-home"])
      expect(tagged.total).toBe(1)
      // Each tag is checked on its own: a filter of several long tags is longer than one tag may be.
      const long = ["x".repeat(90), "y".repeat(90), "home"].join(",")
      expect((yield* callRaw("GET", `${models}?tags=${long}`, { token: key })).body.items.map((m: any) => m.id)).toEqual(["ravi-home"])
      for (const bad of ["svc:home", ",,", "z".repeat(101)]) {
        const refused = yield* callRaw("GET", `${models}?tags=${encodeURIComponent(bad)}`, { token: key })
        expect([refused.status, refused.body.error.code]).toEqual([422, "validation_error"])
      }
    }))

  it.effect("PATCH changes the definition only; refresh archives the previous content; clear and delete; history newest first", () =>
    Effect.gen(function*() {
      const { create, finished, get, key, models, record, spaceId } = yield* setup
      const [fact] = yield* record("Lena: I keep three cats named Miso, Tofu and Udon.", "2024-06-01T10:00:00Z")
      const created = yield* create({ name: "Pets", query: "Which pets does Lena have?", model_id: "pets" })
      yield* finished(created.body.job_id)
      const first = (yield* get("pets")).body

      const empty = yield* callRaw("PATCH", `${models}/pets`, { token: key, json: {} })
      expect(empty.status).toBe(400)
      expect(empty.body.error.code).toBe("no_fields")
      const patched = yield* callRaw("PATCH", `${models}/pets`, { token: key, json: { name: "Lena's pets", max_tokens: 512 } })
      expect(patched.status, patched.text).toBe(200)
      expect(patched.body).toMatchObject({ id: "pets", name: "Lena's pets", max_tokens: 512, query: "Which pets does Lena have?" })
      expect(patched.body.content).toBe(first.content)
      expect(patched.body.last_refreshed_at).toBe(first.last_refreshed_at)

      const refresh = yield* callRaw("POST", `${models}/pets/refresh`, { token: key })
      expect(refresh.status).toBe(202)
      expect(refresh.body).toMatchObject({ model_id: "pets", status: "queued" })
      expect((yield* finished(refresh.body.job_id)).status).toBe("completed")
      const second = (yield* get("pets")).body
      expect(second.content.startsWith("## Lena's pets\n")).toBe(true)
      expect(Date.parse(second.last_refreshed_at)).toBeGreaterThanOrEqual(Date.parse(first.last_refreshed_at))

      const cleared = yield* callRaw("POST", `${models}/pets/clear`, { token: key })
      expect(cleared.status).toBe(200)
      expect(cleared.body.content).toBeNull()
      expect(cleared.body.name).toBe("Lena's pets")

      const history = (yield* callRaw("GET", `${models}/pets/history`, { token: key })).body
      expect(history.total).toBe(2)
      expect(history.entries.map((e: any) => e.previous_content)).toEqual([second.content, first.content])
      expect(Date.parse(history.entries[0].changed_at)).toBeGreaterThanOrEqual(Date.parse(history.entries[1].changed_at))

      const deleted = yield* callRaw("DELETE", `${models}/pets`, { token: key })
      expect(deleted.status).toBe(204)
      expect((yield* get("pets")).status).toBe(404)
      // Its sources are untouched.
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?prefer_observations=false`, { token: key })
      expect(listed.body.items.map((m: any) => m.id)).toContain(fact)
    }))

  it.effect("is_stale turns true when a matching memory is recorded, and a delta refresh adds it in place", () =>
    Effect.gen(function*() {
      const { create, finished, get, key, models, record } = yield* setup
      yield* record("Noah: I play the trumpet in a jazz band.", "2024-01-10T10:00:00Z", { tags: ["music"] })
      const created = yield* create({
        name: "Music",
        query: "What music does Noah play?",
        model_id: "music",
        tags: ["music"],
        trigger: { mode: "delta" }
      })
      yield* finished(created.body.job_id)
      const first = (yield* get("music")).body
      expect(first.is_stale).toBe(false)
      expect(first.trigger).toEqual({ mode: "delta", refresh_on_new_memories: false, memory_type: null })

      // A memory the model does not draw on (another tag) leaves it fresh.
      yield* record("Noah: I play tennis on Sundays.", "2024-01-11T10:00:00Z", { tags: ["sport"] })
      expect((yield* get("music")).body.is_stale).toBe(false)
      yield* record("Noah: I also play the saxophone at weddings.", "2024-02-01T10:00:00Z", { tags: ["music"] })
      expect((yield* get("music")).body.is_stale).toBe(true)

      const refresh = yield* callRaw("POST", `${models}/music/refresh`, { token: key })
      yield* finished(refresh.body.job_id)
      const second = (yield* get("music")).body
      expect(second.is_stale).toBe(false)
      // In place: the new memory's line first, then every line it said before, in its order.
      const lines = (content: string) => content.split("\n").filter((l) => l.startsWith("- "))
      expect(lines(first.content).length).toBeGreaterThan(0)
      expect(lines(second.content)[0]).toMatch(/saxophone.*\(2024-02-01\)/)
      expect(lines(second.content).slice(1)).toEqual(lines(first.content))
      expect(second.content).not.toContain("tennis")
    }))

  it.effect("deleting a memory a model drew on marks it stale, and the next delta refresh rewrites it without that memory", () =>
    Effect.gen(function*() {
      const { create, finished, get, key, models, record, spaceId } = yield* setup
      const [boat] = yield* record("Iris: I own a small sailing boat called Petrel.", "2024-03-01T10:00:00Z")
      yield* record("Iris: I sail on the lake every weekend.", "2024-03-02T10:00:00Z")
      const created = yield* create({ name: "Sailing", query: "What does Iris do with sailing?", model_id: "sailing", trigger: { mode: "delta" } })
      yield* finished(created.body.job_id)
      expect((yield* get("sailing")).body.content).toContain("Petrel")

      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${boat}`, { token: key })).status).toBe(204)
      expect((yield* get("sailing")).body.is_stale).toBe(true)
      const refresh = yield* callRaw("POST", `${models}/sailing/refresh`, { token: key })
      yield* finished(refresh.body.job_id)
      const after = (yield* get("sailing")).body
      expect(after.is_stale).toBe(false)
      expect(after.content).not.toContain("Petrel")
      expect(after.content).toContain("sails on the lake")
    }))

  it.effect("a model with nothing to draw on says so, never an empty string", () =>
    Effect.gen(function*() {
      const { create, finished, get, record } = yield* setup
      yield* record("Owen: I grow tomatoes on my balcony.", "2024-03-01T10:00:00Z")
      const created = yield* create({ name: "Cars", query: "Which car does Owen drive?", model_id: "cars", tags: ["vehicles"] })
      yield* finished(created.body.job_id)
      expect((yield* get("cars")).body.content).toBe("## Cars\n_No memories answer this yet._")
    }))

  it.effect("missing space or model is 404 model_error; bad fields 422; a taken model_id 409; another organization 403", () =>
    Effect.gen(function*() {
      const { create, createOffContract, key, models, record } = yield* setup
      yield* record("Pia: I speak Finnish.", "2024-03-01T10:00:00Z")
      const missingSpace = yield* call("GET", `/v1/spaces/nope-${Date.now()}/models`, { token: key })
      expect(missingSpace.status).toBe(404)
      expect(missingSpace.body.error.code).toBe("model_error")
      for (const [method, path] of [
        ["GET", `${models}/ghost`],
        ["PATCH", `${models}/ghost`],
        ["POST", `${models}/ghost/refresh`],
        ["POST", `${models}/ghost/clear`],
        ["DELETE", `${models}/ghost`],
        ["GET", `${models}/ghost/history`]
      ] as const) {
        const reply = yield* callRaw(method, path, { token: key, json: method === "PATCH" ? { name: "x" } : undefined })
        expect(reply.status, `${method} ${path}`).toBe(404)
        expect(reply.body.error.code).toBe("model_error")
      }
      for (const body of [
        { name: "x", query: "q", max_tokens: 255 },
        { name: "x", query: "q", max_tokens: 8193 },
        { name: "x", query: "q", max_tokens: 1000.5 },
        { name: "x", query: "q", model_id: "Upper-Case" },
        { name: "x", query: "q", model_id: "two--hyphens" },
        { name: "x", query: "q", model_id: "-lead" },
        { name: "", query: "q" },
        { name: "x", query: "q", trigger: { mode: "sometimes" } },
        { name: "x", query: "q", trigger: { memory_type: ["summary"] } },
        { name: "x", query: "q", tags: ["svc:reserved"] },
        { name: "x", query: "q", colour: "blue" }
      ]) {
        const reply = yield* createOffContract(body)
        expect(reply.status, JSON.stringify(body)).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
      // A required field left out is an invalid body, as on every endpoint.
      for (const body of [{ name: "x" }, { query: "q" }]) {
        const reply = yield* createOffContract(body)
        expect(reply.status, JSON.stringify(body)).toBe(400)
        expect(reply.body.error.code).toBe("bad_request")
      }
      expect((yield* create({ name: "x", query: "q", max_tokens: 256, model_id: "edge-low" })).status).toBe(202)
      expect((yield* create({ name: "x", query: "q", max_tokens: 8192, model_id: "edge-high" })).status).toBe(202)
      const taken = yield* create({ name: "x", query: "q", model_id: "edge-low" })
      expect(taken.status).toBe(409)
      const badPatch = yield* callRaw("PATCH", `${models}/edge-low`, { token: key, json: { max_tokens: 9000 } })
      expect(badPatch.status).toBe(422)

      const stranger = yield* signup("stranger")
      const theirs = (yield* createKey(stranger.token)).raw_key
      for (const [method, path] of [
        ["GET", models],
        ["POST", models],
        ["GET", `${models}/edge-low`],
        ["PATCH", `${models}/edge-low`],
        ["POST", `${models}/edge-low/refresh`],
        ["POST", `${models}/edge-low/clear`],
        ["DELETE", `${models}/edge-low`],
        ["GET", `${models}/edge-low/history`]
      ] as const) {
        const json = method === "POST" && path === models ? { name: "x", query: "q" } : method === "PATCH" ? { name: "x" } : undefined
        const reply = yield* callRaw(method, path, { token: theirs, json })
        expect(reply.status, `${method} ${path}`).toBe(403)
        expect(reply.body.error.code).toBe("forbidden")
      }
      // Still there, untouched.
      expect((yield* callRaw("GET", `${models}/edge-low`, { token: key })).body.name).toBe("x")
    }))
})
