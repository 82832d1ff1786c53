/**
 * Extraction settings over real HTTP: the defaults, PUT/GET/DELETE, who may
 * change them, what is refused, and what they do to the next write: with the
 * built-in extractor (verbatim keeps a write whole, guidance keeps only the
 * facts naming its topics) and with an extraction model (a stand-in speaking
 * the OpenAI wire protocol that records the prompt it is sent).
 */
import type { WireBody } from "../../src/client/Wire.ts"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Catalogs from "../../services/llm/Catalog.ts"
import { guidanceTopics } from "../../src/ingestion/Extractor.ts"
import { type Account, addMember, call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

const DEFAULTS = { mode: "auto", guidance: null, custom_prompt: null, updated_at: null }

const Item = Schema.Struct({ text: Schema.String, entities: Schema.Array(Schema.String) })
const Listed = Schema.Struct({ items: Schema.Array(Item) })
const Recorded = Schema.Struct({ memories: Schema.Array(Schema.Struct({ content: Schema.String })) })
const Job = Schema.Struct({ status: Schema.String })

/** An owner (session), a key of the organization and an empty space. */
const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("ext")
  expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
  return { owner, key, spaceId, path: `/v1/spaces/${spaceId}/extraction-settings` as const }
})

const putSettings = (owner: Account, path: `/v1/spaces/${string}/extraction-settings`, json: WireBody<"PUT", `/v1/spaces/${string}/extraction-settings`>) =>
  call("PUT", path, { token: owner.token, json }).pipe(
    Effect.tap((reply) => expect(reply.status, reply.text).toBe(200))
  )

const record = (key: string, spaceId: string, content: string, extra: Record<string, unknown> = {}) =>
  call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } })

const recordSync = (key: string, spaceId: string, content: string) =>
  record(key, spaceId, content).pipe(
    Effect.tap((reply) => expect(reply.status, reply.text).toBe(200)),
    Effect.map((reply) => Schema.decodeUnknownSync(Recorded)(reply.body).memories.map((m) => m.content))
  )

/** Queues a write and waits for its job to finish. */
const recordQueued = (key: string, spaceId: string, content: string) =>
  Effect.gen(function*() {
    const queued = yield* record(key, spaceId, content, { async: true })
    expect(queued.status, queued.text).toBe(202)
    for (let i = 0; i < 200; i++) {
      const job = Schema.decodeUnknownSync(Job)((yield* call("GET", `/v1/spaces/${spaceId}/jobs/${queued.body.job_id}`, { token: key })).body)
      if (job.status === "completed") return
      expect(job.status).not.toBe("failed")
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage("job did not finish")
  })

/** The space's stored facts (consolidation notes left aside). */
const facts = (key: string, spaceId: string) =>
  call("GET", `/v1/spaces/${spaceId}/memories?limit=100&type=fact&prefer_observations=false`, { token: key }).pipe(
    Effect.map((reply) => Schema.decodeUnknownSync(Listed)(reply.body).items)
  )

/** Over 400 characters of several sentences in the first person: the built-in extractor cuts it into facts. */
const LONG = "Caroline: I moved to Lisbon in the spring of 2019 to work at a small design studio near the river, " +
  "and I still live in the same flat in Alfama with my two cats, Miso and Tofu. " +
  "My sister Ana visits me every August and we always take the tram up to the castle before dinner at our favourite tasca. " +
  "Last year I started volunteering at the city aquarium on Saturdays, where I help with the school tours and the jellyfish tanks. " +
  "Next spring I plan to run the Lisbon half marathon for the first time, so I am training four mornings a week along the waterfront."

/** Three facts about three topics, each sentence long enough to be a fact of its own. */
const TOPICS = [
  "Melanie has played tennis at the club by the harbour every Sunday morning since she was twelve, and she won the regional doubles final with her cousin last autumn.",
  "Melanie sold her old blue hatchback in March and bought a second-hand electric car from a dealer in Denver, which she mostly uses for the long drive to her parents.",
  "Melanie is severely allergic to peanuts and carries two adrenaline pens in her bag at all times, so restaurants always have to be told about it before she orders."
]

eachProfile("extraction settings", (it) => {
  it.effect("a space starts on the defaults, readable with a session; an API key gets 401 session_required", () =>
    Effect.gen(function*() {
      const { key, owner, path, spaceId } = yield* setup
      const reply = yield* call("GET", path, { token: owner.token })
      expect(reply.status, reply.text).toBe(200)
      expect(reply.body).toEqual({ space_id: spaceId, ...DEFAULTS })
      // The control plane's, as the rules are: an agent's key neither reads nor changes them.
      const byKey = yield* call("GET", path, { token: key })
      expect(byKey.status, byKey.text).toBe(401)
      expect(byKey.body.error.code).toBe("session_required")
    }))

  it.effect("PUT replaces the settings, GET reads them back, DELETE restores the defaults", () =>
    Effect.gen(function*() {
      const { owner, path, spaceId } = yield* setup
      const put = yield* putSettings(owner, path, { mode: "verbatim", guidance: "tennis, allerg*", custom_prompt: "Keep dates." })
      expect(put.body).toMatchObject({ space_id: spaceId, mode: "verbatim", guidance: "tennis, allerg*", custom_prompt: "Keep dates." })
      expect(Date.parse(put.body.updated_at)).toBeGreaterThan(Date.now() - 60_000)
      const got = yield* call("GET", path, { token: owner.token })
      expect(got.body).toEqual(put.body)

      // Omitted fields go back to their defaults; blank text is no text.
      const replaced = yield* putSettings(owner, path, { guidance: "   " })
      expect(replaced.body).toMatchObject({ mode: "auto", guidance: null, custom_prompt: null })

      const deleted = yield* call("DELETE", path, { token: owner.token })
      expect(deleted.status, deleted.text).toBe(204)
      expect((yield* call("GET", path, { token: owner.token })).body).toEqual({ space_id: spaceId, ...DEFAULTS })
    }))

  it.effect("changing them needs a session (a key gets 401 session_required) of an owner or admin (a member gets 403)", () =>
    Effect.gen(function*() {
      const { key, owner, path, spaceId } = yield* setup
      for (const method of ["PUT", "DELETE"] as const) {
        const reply = yield* call(method, path, { token: key, ...(method === "PUT" ? { json: { mode: "verbatim" } } : {}) })
        expect(reply.status, `${method}: ${reply.text}`).toBe(401)
        expect(reply.body.error.code).toBe("session_required")
      }
      const member = yield* addMember(owner, "member")
      for (const method of ["PUT", "DELETE"] as const) {
        const reply = yield* call(method, path, { token: member.token, ...(method === "PUT" ? { json: { mode: "verbatim" } } : {}) })
        expect(reply.status, `${method}: ${reply.text}`).toBe(403)
        expect(reply.body.error.code).toBe("insufficient_role")
      }
      expect((yield* call("GET", path, { token: member.token })).body).toEqual({ space_id: spaceId, ...DEFAULTS })

      const admin = yield* addMember(owner, "admin")
      expect((yield* putSettings(admin, path, { mode: "verbatim" })).body.mode).toBe("verbatim")
      expect((yield* call("DELETE", path, { token: admin.token })).status).toBe(204)
    }))

  it.effect("a missing space is 404 not_found; another organization's space is 403 forbidden", () =>
    Effect.gen(function*() {
      const { owner, path } = yield* setup
      const other = yield* signup("other")
      for (const [method, json] of [["GET", undefined], ["PUT", { mode: "verbatim" }], ["DELETE", undefined]] as const) {
        const missing = yield* call(method, `/v1/spaces/${unique("nope")}/extraction-settings`, { token: owner.token, ...(json ? { json } : {}) })
        expect(missing.status, `${method}: ${missing.text}`).toBe(404)
        expect(missing.body.error.code).toBe("not_found")
        const foreign = yield* call(method, path, { token: other.token, ...(json ? { json } : {}) })
        expect(foreign.status, `${method}: ${foreign.text}`).toBe(403)
        expect(foreign.body.error.code).toBe("forbidden")
      }
      expect((yield* call("GET", path, { token: owner.token })).body.mode).toBe("auto")
    }))

  it.effect("bad input is 422 validation_error and changes nothing; the limits themselves are accepted", () =>
    Effect.gen(function*() {
      const { owner, path } = yield* setup
      const bad: ReadonlyArray<Record<string, unknown>> = [
        { mode: "summarize" },
        { guidance: "g".repeat(2001) },
        { custom_prompt: "p".repeat(8001) },
        { mode: "custom" },
        { mode: "custom", custom_prompt: "   " },
        { mode: "custom", custom_prompt: "Extract only the dates." },
        { guidance: 42 },
        { guidance: "ok\u0000" },
        { mode: "auto", threshold: 3 }
      ]
      for (const json of bad) {
        const reply = yield* call("PUT", path, { token: owner.token, json })
        expect(reply.status, `${JSON.stringify(json).slice(0, 80)}: ${reply.text}`).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
      const custom = yield* call("PUT", path, { token: owner.token, json: { mode: "custom", custom_prompt: "Extract only the dates." } })
      expect(custom.body.error.message).toContain("EXTRACTION_MODEL")
      expect((yield* call("GET", path, { token: owner.token })).body.updated_at).toBeNull()

      const limits = yield* putSettings(owner, path, { guidance: "g".repeat(2000), custom_prompt: "p".repeat(8000) })
      expect(limits.body.guidance).toHaveLength(2000)
      expect(limits.body.custom_prompt).toHaveLength(8000)
    }))

  it.effect("verbatim stores each write whole as one memory, queued or not; auto cuts the same write into facts", () =>
    Effect.gen(function*() {
      const { key, owner, path, spaceId } = yield* setup
      // Auto first (the space's entity is live when the settings change: the next write must see them).
      yield* recordQueued(key, spaceId, LONG)
      const split = yield* facts(key, spaceId)
      expect(split.length).toBeGreaterThan(1)
      expect(split.map((m) => m.text)).not.toContain(LONG)
      expect(split.some((m) => m.text.includes("Caroline moved to Lisbon"))).toBe(true)

      const verbatimSpace = unique("verbatim")
      expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: verbatimSpace } })).status).toBe(201)
      yield* recordQueued(key, verbatimSpace, "Jon opened a dance studio in Boston.")
      yield* putSettings(owner, `/v1/spaces/${verbatimSpace}/extraction-settings`, { mode: "verbatim" })
      yield* recordQueued(key, verbatimSpace, LONG)
      const whole = (yield* facts(key, verbatimSpace)).filter((m) => m.text.includes("Lisbon"))
      expect(whole.map((m) => m.text)).toEqual([LONG])
      expect(whole[0]!.entities).toContain("Caroline")

      // A synchronous write too, even one the built-in extractor finds uninformative.
      expect(yield* recordSync(key, verbatimSpace, `${LONG} (again)`)).toEqual([`${LONG} (again)`])
      expect(yield* recordSync(key, verbatimSpace, "ok thanks!")).toEqual(["ok thanks!"])
      expect(yield* recordSync(key, spaceId, "ok thanks!")).toEqual([])

      // DELETE: the next write is extracted again.
      expect((yield* call("DELETE", `/v1/spaces/${verbatimSpace}/extraction-settings`, { token: owner.token })).status).toBe(204)
      const again = yield* recordSync(key, verbatimSpace, `${LONG} Once more.`)
      expect(again.length).toBeGreaterThan(1)
      expect((yield* call("GET", path, { token: owner.token })).body.mode).toBe("auto")
    }))

  it.effect("with the built-in extractor, guidance keeps only the facts that name one of its topics", () =>
    Effect.gen(function*() {
      const { key, owner, path, spaceId } = yield* setup
      const content = TOPICS.join(" ")
      const unguided = yield* recordSync(key, spaceId, content)
      expect(unguided).toHaveLength(3)

      yield* putSettings(owner, path, { guidance: "TENNIS; allerg*" })
      const guided = yield* recordSync(key, spaceId, content)
      expect(guided).toHaveLength(2)
      expect(guided.some((text) => text.includes("tennis"))).toBe(true)
      expect(guided.some((text) => text.includes("allergic"))).toBe(true)
      expect(guided.some((text) => text.includes("electric car"))).toBe(false)
      // A chat turn is one fact: kept or dropped whole.
      expect(yield* recordSync(key, spaceId, "Melanie: I bought a red car last week.")).toEqual([])
      expect(yield* recordSync(key, spaceId, "Melanie: I played tennis with Jon today.")).toHaveLength(1)

      yield* putSettings(owner, path, { guidance: "knitting" })
      expect(yield* recordSync(key, spaceId, content)).toEqual([])

      // Queued writes follow the same settings (a fresh space: nothing stored before).
      const queuedSpace = unique("guided")
      expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: queuedSpace } })).status).toBe(201)
      yield* putSettings(owner, `/v1/spaces/${queuedSpace}/extraction-settings`, { guidance: "electric car" })
      yield* recordQueued(key, queuedSpace, content)
      const stored = yield* facts(key, queuedSpace)
      expect(stored).toHaveLength(1)
      expect(stored[0]!.text).toContain("electric car")
    }))
})

describe("guidance topics", () => {
  const keeps = (guidance: string, text: string) => guidanceTopics(guidance).some((topic) => topic.test(text))

  it("are whole words or phrases, case-insensitive, separated by commas, semicolons or new lines", () => {
    expect(keeps("car", "She drives a Car to work.")).toBe(true)
    expect(keeps("car", "She collects cards.")).toBe(false)
    expect(keeps("peanut butter", "He loves peanut\n  butter toast.")).toBe(true)
    expect(keeps("peanut butter", "He loves peanut sauce and butter.")).toBe(false)
    expect(keeps("x; tennis\nz", "tennis on Sunday")).toBe(true)
    expect(keeps("c++", "She writes C++ at work.")).toBe(true)
    expect(guidanceTopics("tennis, golf;\nchess")).toHaveLength(3)
  })

  it("end in * to match any word starting with them; blank guidance has no topics", () => {
    expect(keeps("allerg*", "She has an allergy.")).toBe(true)
    expect(keeps("allerg*", "He is allergic to cats.")).toBe(true)
    expect(keeps("allerg*", "Hallergy is not a word.")).toBe(false)
    expect(guidanceTopics(" , ;\n*")).toEqual([])
  })
})

// --- With an extraction model -------------------------------------------------------------------

interface Sent {
  readonly system: string
  readonly user: string
}

const sent: Array<Sent> = []
const ChatBody = Schema.Struct({ messages: Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.String })) })

/** Answers every extraction with one memory quoting the start of what it was sent. */
const standIn = createServer((req, res) => {
  let raw = ""
  req.on("data", (chunk) => (raw += chunk))
  req.on("end", () => {
    const body = Schema.decodeUnknownSync(ChatBody)(JSON.parse(raw || "{}"))
    const user = [...body.messages].reverse().find((m) => m.role === "user")?.content ?? ""
    sent.push({ system: body.messages.find((m) => m.role === "system")?.content ?? "", user })
    const answer = { memories: [{ text: `Noted: ${user.slice(0, 60)}`, type: "fact", entities: [] }] }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "extractor-1",
      choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(answer) }, finish_reason: "stop" }],
      usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 }
    }))
  })
})
await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve))
afterAll(() => new Promise<void>((resolve) => standIn.close(() => resolve())))

const catalog = Catalogs.layerStatic({
  models: [{
    id: "test/extractor-1",
    provider: "openai",
    base_url: `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`,
    upstream_model: "extractor-1",
    short_name: "extractor",
    credits_per_1k_input: 1,
    credits_per_1k_output: 2,
    requests_per_minute: 1000,
    aliases: [],
    timeout_seconds: 10,
    max_retries: 0
  }]
})

const lastAbout = (marker: string) => [...sent].reverse().find((s) => s.user.includes(marker))

const BUILT_IN = "You extract durable memories from one piece of content"

eachProfile("extraction settings with EXTRACTION_MODEL", (it) => {
  it.effect("guidance is added to the model's prompt; custom replaces its instructions; DELETE restores them", () =>
    Effect.gen(function*() {
      const { key, owner, path, spaceId } = yield* setup
      const plain = unique("plain")
      expect(yield* recordSync(key, spaceId, `Tim lives in Oslo. ${plain}`)).toEqual([`Noted: Tim lives in Oslo. ${plain}`])
      const builtIn = lastAbout(plain)!.system
      expect(builtIn).toContain(BUILT_IN)
      expect(builtIn).not.toContain("Guidance")

      const guidance = `Keep only travel plans ${unique("g")}.`
      yield* putSettings(owner, path, { guidance })
      const guided = unique("guided")
      yield* recordSync(key, spaceId, `Tim flies to Rome on Friday. ${guided}`)
      const withGuidance = lastAbout(guided)!.system
      expect(withGuidance).toContain(BUILT_IN)
      expect(withGuidance).toContain(guidance)

      const customPrompt = `You are a travel clerk ${unique("p")}: list each trip as its own memory.`
      const put = yield* putSettings(owner, path, { mode: "custom", guidance, custom_prompt: customPrompt })
      expect(put.body.mode).toBe("custom")
      const custom = unique("custom")
      yield* recordSync(key, spaceId, `Tim drives to Bergen next week. ${custom}`)
      const customSystem = lastAbout(custom)!.system
      expect(customSystem.startsWith(customPrompt)).toBe(true)
      expect(customSystem).not.toContain(BUILT_IN)
      expect(customSystem).toContain(guidance)
      expect(customSystem).toContain("\"occurred_start\"")
      expect(customSystem).toContain("Event time of the content:")

      // The queue drains under the same settings.
      const queued = unique("queued")
      yield* recordQueued(key, spaceId, `Tim sails to Tromsø in June. ${queued}`)
      expect(lastAbout(queued)!.system.startsWith(customPrompt)).toBe(true)

      expect((yield* call("DELETE", path, { token: owner.token })).status).toBe(204)
      const reset = unique("reset")
      yield* recordSync(key, spaceId, `Tim walks to work. ${reset}`)
      const timeless = (system: string) => system.replace(/^Event time of the content: .*$/m, "")
      expect(timeless(lastAbout(reset)!.system)).toBe(timeless(builtIn))
    }))

  it.effect("verbatim stores the write whole without calling the model", () =>
    Effect.gen(function*() {
      const { key, owner, path, spaceId } = yield* setup
      yield* putSettings(owner, path, { mode: "verbatim", guidance: "anything" })
      const marker = unique("verbatim")
      const content = `${LONG} ${marker}`
      expect(yield* recordSync(key, spaceId, content)).toEqual([content])
      expect(lastAbout(marker)).toBeUndefined()
    }))
}, { extractionModel: Option.some("extractor") }, { catalog })
