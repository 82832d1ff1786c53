/**
 * EXTRACTION_MODEL: a node whose extractor is a catalog model, here a
 * stand-in OpenAI-compatible server inside the test that answers the
 * extraction prompt with fixed JSON (or, on marked content, with prose, a
 * wrong shape or a 503) and records what it is sent.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Either, Layer, Option, Schema } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Extractor as ExtractorLayer, modelsOn } from "../../layers/Models.ts"
import { StartupError } from "../../layers/StartupError.ts"
import { layerMemory } from "../../services/cache/Cache.ts"
import * as Catalogs from "../../services/llm/Catalog.ts"
import { AppConfig, type AppConfigShape, fromEnv } from "../../src/config/AppConfig.ts"
import { Extractor } from "../../src/ingestion/Extractor.ts"
import { decodeAnswer } from "../../src/ingestion/LlmExtractor.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { type Profile, profiles, serverSkipReason } from "../support/Profiles.ts"
import { testNode, testSettings } from "../support/TestNode.ts"

const ANSWER = {
  memories: [
    {
      text: "Caroline attended an LGBTQ support group on 7 May 2023.",
      type: "fact",
      entities: [{ name: "Caroline", kind: "person" }, { name: "LGBTQ support group", kind: "organisation" }],
      occurred_start: "2023-05-07T00:00:00Z",
      occurred_end: "2023-05-07T23:59:59Z"
    },
    {
      text: "Caroline found the LGBTQ support group powerful.",
      type: "fact",
      entities: [{ name: "Caroline", kind: "Person" }],
      occurred_start: null,
      occurred_end: null
    }
  ]
}

const bodies: Array<any> = []
const standIn = createServer((req, res) => {
  let raw = ""
  req.on("data", (chunk) => (raw += chunk))
  req.on("end", () => {
    const body = JSON.parse(raw || "{}")
    bodies.push(body)
    const said: string = [...(body.messages ?? [])].reverse().find((m: any) => m.role === "user")?.content ?? ""
    if (said.includes("[down]")) {
      res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "overloaded" } }))
      return
    }
    const content = said.includes("[prose]")
      ? "Caroline went to a support group."
      : said.includes("[shape]")
      ? JSON.stringify({ memories: [{ text: "Caroline went somewhere." }] })
      : said.includes("[nothing]")
      ? JSON.stringify({ memories: [] })
      : "```json\n" + JSON.stringify(ANSWER, null, 2) + "\n```"
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 200, completion_tokens: 80, total_tokens: 280 }
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
    aliases: ["fast"],
    timeout_seconds: 10,
    max_retries: 0
  }]
})

const settings = (overrides: Partial<AppConfigShape>) => Layer.succeed(AppConfig, { ...testSettings, ...overrides })

/** The profile's infrastructure with the stand-in catalog, and the extractor wired as start-up wires it. */
const nodeExtractingWith = (profile: Profile) =>
  testNode(profile.infrastructure(modelsOn(catalog)), { extractionModel: Option.some("extractor") })

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("llm")
  expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
  const record = (content: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } })
  const list = call("GET", `/v1/spaces/${spaceId}/memories?limit=100`, { token: key }).pipe(Effect.map((r) => r.body.items as Array<any>))
  return { key, spaceId, record, list }
})

const lastCallAbout = (marker: string) => [...bodies].reverse().find((b) => b.messages?.some((m: any) => m.content.includes(marker)))

for (const profile of profiles) {
  layer(nodeExtractingWith(profile), { excludeTestServices: true, timeout: Duration.minutes(2) })(
    `LLM extraction [${profile.name}]`,
    (it) => {
      it.effect("stores the model's memories: text, entities, occurred dates; the prompt carries the event time", () =>
        Effect.gen(function*() {
          const { key, spaceId, record, list } = yield* setup
          const content = `Caroline: I went to the LGBTQ support group yesterday and it was powerful. ${spaceId}`
          const reply = yield* record(content, { timestamp: "2023-05-08T13:56:00Z" })
          expect(reply.status, reply.text).toBe(200)
          expect(reply.body.memories.map((m: any) => m.content)).toEqual(ANSWER.memories.map((m) => m.text))
          expect(reply.body.memories[0]).toMatchObject({
            memory_type: "fact",
            entities: ["Caroline", "LGBTQ support group"],
            occurred_start: "2023-05-07T00:00:00.000Z",
            occurred_end: "2023-05-07T23:59:59.000Z"
          })

          const sent = lastCallAbout(spaceId)
          expect(sent.model).toBe("extractor-1")
          expect(sent.response_format).toEqual({ type: "json_object" })
          expect(sent.temperature).toBe(0)
          const system = sent.messages.find((m: any) => m.role === "system").content as string
          expect(system).toContain("2023-05-08T13:56:00.000Z")
          expect(system).toContain("Speaker: Caroline")
          expect(system).toContain("\"occurred_start\"")
          expect(sent.messages.at(-1)).toEqual({ role: "user", content })

          const items = yield* list
          expect(items.map((m) => m.text).sort()).toEqual(ANSWER.memories.map((m) => m.text).sort())
          const dated = items.find((m) => m.text === ANSWER.memories[0]!.text)
          expect(dated).toMatchObject({
            entities: ["Caroline", "LGBTQ support group"],
            occurred_start: "2023-05-07T00:00:00.000Z",
            occurred_end: "2023-05-07T23:59:59.000Z",
            date: "2023-05-08T13:56:00.000Z"
          })
          // Nothing dated in the text: the memory reports its event time, as retrieve does.
          expect(items.find((m) => m.text === ANSWER.memories[1]!.text)).toMatchObject({
            occurred_start: "2023-05-08T13:56:00.000Z",
            occurred_end: "2023-05-08T13:56:00.000Z",
            entities: ["Caroline"]
          })

          const found = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "When did Caroline attend the support group?" } })
          expect(found.status).toBe(200)
          expect(found.body.results.map((r: any) => r.content)).toContain(ANSWER.memories[0]!.text)
        }))

      it.effect("an answer that is not the extraction JSON fails the write with 503, and nothing is stored", () =>
        Effect.gen(function*() {
          const { record, list } = yield* setup
          for (const marker of ["[prose]", "[shape]", "[down]"]) {
            const reply = yield* record(`Caroline: I went to the support group yesterday. ${marker}`)
            expect(reply.status, `${marker}: ${reply.text}`).toBe(503)
            expect(reply.body.error.code).toBe("service_unavailable")
            expect(reply.body.error.message).toContain("test/extractor-1")
            expect(reply.headers["x-request-id"]).toBe(reply.body.error.request_id)
          }
          expect((yield* record("Caroline: hi. [prose]")).body.error.message).toContain("not the extraction JSON")
          expect(yield* list).toEqual([])
        }))

      it.effect("a queued write the model cannot extract is marked failed with the reason", () =>
        Effect.gen(function*() {
          const { key, spaceId, record } = yield* setup
          const queued = yield* record("Caroline: I went to the support group yesterday. [prose]", { async: true })
          expect(queued.status).toBe(202)
          let job: any
          for (let i = 0; i < 200; i++) {
            job = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${queued.body.job_id}`, { token: key })).body
            if (job.status !== "queued" && job.status !== "processing") break
            yield* Effect.sleep("50 millis")
          }
          expect(job.status).toBe("failed")
          expect(job.items.failed).toBe(1)
          expect(job.error).toContain("not the extraction JSON")
        }))

      it.effect("an assistant's non-answers never reach the model; only its informative sentences do", () =>
        Effect.gen(function*() {
          const { record, spaceId } = yield* setup
          const Stored = Schema.Struct({ memories: Schema.Array(Schema.Unknown) })
          const Sent = Schema.Struct({ messages: Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.String })) })
          const before = bodies.length
          const nothing = yield* record("Assistant: I'm sorry, but I have no stored memories about that yet.")
          expect(nothing.status).toBe(200)
          expect(Schema.decodeUnknownSync(Stored)(nothing.body).memories).toEqual([])
          expect(bodies.length).toBe(before)

          const hedged = yield* record(`Assistant: I'm not sure, but museum ${spaceId} opens at 9. Would you like directions?`)
          expect(hedged.status).toBe(200)
          const sent = Schema.decodeUnknownSync(Sent)(lastCallAbout(spaceId))
          expect(sent.messages.at(-1)).toEqual({ role: "user", content: `Assistant: Museum ${spaceId} opens at 9.` })
        }))

      it.effect("content the model finds uninformative stores nothing", () =>
        Effect.gen(function*() {
          const { record, list } = yield* setup
          const reply = yield* record("ok thanks! [nothing]")
          expect(reply.status).toBe(200)
          expect(reply.body.memories).toEqual([])
          expect(yield* list).toEqual([])
        }))
    }
  )
}

const skipped = serverSkipReason
if (skipped !== undefined) {
  describe("LLM extraction [server profile]", () => {
    it.skip(skipped, () => {})
  })
}

/** The extractor start-up builds for a given EXTRACTION_MODEL, over the stand-in catalog. */
const extractorFor = (extractionModel: Option.Option<string>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      ExtractorLayer.pipe(Layer.provide(Layer.mergeAll(settings({ extractionModel }), catalog, layerMemory)))
    )
    return (yield* Effect.provide(Extractor, context)).id
  })

describe("EXTRACTION_MODEL", () => {
  it.scoped("names a served model (id, short name or tier), or the local engine, which is the default", () =>
    Effect.gen(function*() {
      expect(yield* extractorFor(Option.none())).toBe("local-nlp@1")
      expect(yield* extractorFor(Option.some("local"))).toBe("local-nlp@1")
      expect(yield* extractorFor(Option.some(Catalogs.LOCAL_MODEL_ID))).toBe("local-nlp@1")
      expect(yield* extractorFor(Option.some("balanced"))).toBe("local-nlp@1")
      expect(yield* extractorFor(Option.some("extractor"))).toBe("llm:test/extractor-1")
      expect(yield* extractorFor(Option.some("test/extractor-1"))).toBe("llm:test/extractor-1")
      expect(yield* extractorFor(Option.some("fast"))).toBe("llm:test/extractor-1")
    }))

  it.scoped("an unserved name stops start-up naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(extractorFor(Option.some("gpt-nope")))
      expect(error).toBeInstanceOf(StartupError)
      expect(error.message).toContain("EXTRACTION_MODEL gpt-nope is not a served model")
      expect(error.message).toContain("extractor (test/extractor-1)")
    }))

  it.effect("is read from the environment, blank meaning unset", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.withConfigProvider(fromEnv, ConfigProvider.fromMap(new Map(Object.entries(env))))
      expect((yield* read({ EXTRACTION_MODEL: " extractor " })).extractionModel).toEqual(Option.some("extractor"))
      expect((yield* read({ EXTRACTION_MODEL: "  " })).extractionModel).toEqual(Option.none())
      expect((yield* read({})).extractionModel).toEqual(Option.none())
    }))
})

describe("the extraction answer", () => {
  it("decodes fenced or bare JSON, mapping kinds onto the local engine's", () => {
    const fenced = decodeAnswer("Here you go:\n```json\n" + JSON.stringify(ANSWER) + "\n```")
    expect(Either.isRight(fenced)).toBe(true)
    const memories = Either.getOrThrow(fenced).memories
    expect(memories[0]!.entities).toEqual([{ name: "Caroline", kind: "person" }, { name: "LGBTQ support group", kind: "organization" }])
    expect(memories[0]!.occurred_start).toEqual(new Date("2023-05-07T00:00:00Z"))
    expect(memories[1]!.entities[0]!.kind).toBe("person")
    const bare = decodeAnswer(JSON.stringify({ memories: [{ text: " Tim lives in Oslo. ", type: "fact", entities: [{ name: "Oslo", kind: "City" }, { name: "Tesla", kind: "car" }] }] }))
    expect(Either.getOrThrow(bare).memories).toEqual([{
      text: "Tim lives in Oslo.",
      type: "fact",
      entities: [{ name: "Oslo", kind: "place" }, { name: "Tesla", kind: "thing" }],
      occurred_start: null,
      occurred_end: null
    }])
  })

  it("refuses prose, a wrong shape and invalid dates", () => {
    expect(Either.isLeft(decodeAnswer("Tim lives in Oslo."))).toBe(true)
    expect(Either.isLeft(decodeAnswer(JSON.stringify({ memories: [{ text: "Tim lives in Oslo." }] })))).toBe(true)
    expect(Either.isLeft(decodeAnswer(JSON.stringify({ memories: [{ text: "x", type: "opinion" }] })))).toBe(true)
    expect(Either.isLeft(decodeAnswer(JSON.stringify({ memories: [{ text: "x", type: "fact", occurred_start: "someday" }] })))).toBe(true)
    expect(Either.isLeft(decodeAnswer(JSON.stringify({ facts: [] })))).toBe(true)
  })
})
