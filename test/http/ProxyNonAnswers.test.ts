/**
 * What a proxied conversation leaves in memory: the user's facts, and nothing
 * of the answers that tell nothing (the local engine's "I have no stored
 * memories ...", refusals, "I don't know") nor of answers that only quote
 * memories already stored. Driven by the official OpenAI client.
 */
import { afterAll, expect } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect, Schema } from "effect"
import OpenAI from "openai"
import { NOTHING_REMEMBERED } from "../../src/models/LocalEngine.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"
import { startUpstream, upstreamCatalog } from "../support/Upstream.ts"

const upstream = await startUpstream()
afterAll(() => upstream.close())

const Listed = Schema.Struct({
  text: Schema.String,
  type: Schema.String,
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
type Listed = typeof Listed.Type
const MemoryList = Schema.Struct({ items: Schema.Array(Listed) })
const ChatAnswer = Schema.Struct({ choices: Schema.NonEmptyArray(Schema.Struct({ message: Schema.Struct({ content: Schema.String }) })) })
const Stored = Schema.Struct({ memories: Schema.Array(Schema.Struct({ content: Schema.String })) })
const Queued = Schema.Struct({ job_id: Schema.String })
const Job = Schema.Struct({ status: Schema.String, memory_ids: Schema.Array(Schema.String) })

const decode = <A, I>(schema: Schema.Schema<A, I>) => (value: unknown) => Schema.decodeUnknown(schema)(value).pipe(Effect.orDie)

/** Phrases of answers that tell nothing; none may be found in any memory, of any type. */
const NON_ANSWERS = [
  /no stored memories/i,
  /\bI (?:don't|do not) know\b/i,
  /\b(?:can't|cannot) help\b/i,
  /\bI'm not sure\b/i,
  /\bI'm sorry\b/i,
  /\bFrom memory:/,
  /^Assistant have\b/
]

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const server = yield* HttpServer.HttpServer
  const port = server.address._tag === "TcpAddress" ? server.address.port : 0
  const spaceId = unique("remembered")
  const openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: key, defaultHeaders: { "X-Svc-Space-Id": spaceId }, maxRetries: 0 })
  const memories = call("GET", `/v1/spaces/${spaceId}/memories?prefer_observations=false&limit=1000`, { token: key }).pipe(
    Effect.flatMap((reply) => decode(MemoryList)(reply.body)),
    Effect.map((list) => list.items)
  )
  const record = (content: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } })
  /** Queued writes are stored in order: once this one is done, every proxied turn before it is too. */
  const drained = Effect.gen(function*() {
    const queued = yield* Effect.flatMap(record("The conversation is over.", { async: true }), (r) => decode(Queued)(r.body))
    for (let i = 0; i < 600; i++) {
      const job = yield* Effect.flatMap(call("GET", `/v1/spaces/${spaceId}/jobs/${queued.job_id}`, { token: key }), (r) => decode(Job)(r.body))
      if (job.status === "completed") break
      yield* Effect.sleep("100 millis")
    }
    // ...and consolidated: nothing pending, at least one run since the last turn.
    for (let i = 0; i < 600; i++) {
      const status = (yield* call("GET", `/v1/spaces/${spaceId}/consolidation`, { token: key })).body
      if (status.pending_facts === 0 && status.runs.length > 0) return status.runs.length as number
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage("the queued turns were not stored and consolidated in time")
  })
  return { key, spaceId, openai, memories, record, drained }
})

const roleOf = (memory: Listed) => memory.metadata["role"]

interface Turn {
  readonly say: string
  /** A fact the user states, named by a word only it contains. */
  readonly fact?: string
  /** false: the call skips recall (X-Svc-Memory), so the local engine has nothing to answer from. */
  readonly recall?: boolean
}

const conversation: ReadonlyArray<Turn> = [
  { say: "What is my sister's name?" },
  { say: "Where do I live?" },
  { say: "Which dentist do I go to?" },
  { say: "Hi there!" },
  { say: "My sister is called Maya and she lives in Lisbon.", fact: "Maya" },
  { say: "What time is it in Tokyo right now?", recall: false },
  { say: "I work as a nurse at the Royal Free hospital.", fact: "Royal Free" },
  { say: "Can you book me a flight to Rome?", recall: false },
  { say: "I'm allergic to peanuts.", fact: "peanuts" },
  { say: "Do you know my favourite colour?", recall: false },
  { say: "My dog Biscuit is a three-year-old beagle.", fact: "three-year-old beagle" },
  { say: "Who won the football match last night?", recall: false },
  { say: "I drink my coffee with oat milk.", fact: "oat milk" },
  { say: "What is my sister's name?" },
  { say: "I started learning the cello in 2024.", fact: "cello" },
  { say: "What's the weather like today?", recall: false },
  { say: "My partner Sam is a carpenter.", fact: "carpenter" },
  // Related to the beagle: consolidation has a note to make, so notes are checked too.
  { say: "My dog Biscuit the beagle sleeps on my bed every night." },
  { say: "Where does my sister live?" },
  { say: "What do you remember about my dog?" }
]

eachProfile("what a proxied conversation leaves in memory", (it) => {
  it.effect("twenty turns on the local engine: the user's facts are kept, its non-answers and quotes are not", () =>
    Effect.gen(function*() {
      const { drained, memories, openai } = yield* setup
      const history: Array<{ role: "user" | "assistant"; content: string }> = []
      const answers: Array<string> = []
      for (const [i, turn] of conversation.entries()) {
        if (i === 13) {
          // The sister's name must be answerable from memory here, so the quoting answer is exercised too.
          for (let tries = 0; tries < 600 && !(yield* memories).some((m) => m.text.includes("Maya")); tries++) yield* Effect.sleep("100 millis")
        }
        history.push({ role: "user", content: turn.say })
        // No model: the default, the local engine, answers.
        const reply = yield* Effect.promise(() =>
          openai.post<unknown>("/chat/completions", {
            body: { messages: history },
            headers: turn.recall === false ? { "X-Svc-Memory": "false" } : {}
          })
        )
        const content = (yield* decode(ChatAnswer)(reply)).choices[0].message.content
        history.push({ role: "assistant", content })
        answers.push(content)
      }
      yield* drained
      const items = yield* memories
      // Every memory type: the facts, and the notes consolidated from them (there are some to check).
      expect(items.filter((m) => m.type === "note").length).toBeGreaterThan(0)
      for (const memory of items) {
        for (const phrase of NON_ANSWERS) expect(memory.text, `${memory.type}: ${memory.text}`).not.toMatch(phrase)
      }
      expect(items.filter((m) => m.type === "note").filter((m) => NON_ANSWERS.some((p) => p.test(m.text)))).toEqual([])
      // Each answer either knew nothing or quoted a memory already stored: none of them is a memory.
      expect(items.filter((m) => roleOf(m) === "assistant").map((m) => m.text)).toEqual([])
      for (const { fact, say } of conversation) {
        if (fact === undefined) continue
        const stating = items.filter((m) => m.type === "fact" && m.text.includes(fact))
        // Stated once, stored once: the quotes of it are not stored beside it.
        expect(stating.map((m) => m.text), fact).toEqual([say])
        expect(roleOf(stating[0]!)).toBe("user")
      }
      // The conversation went as meant: many answers knew nothing (a stored "I have no stored memories" would
      // have been quoted instead), and one quoted the sister's name from memory.
      expect(answers.filter((a) => a === NOTHING_REMEMBERED).length).toBeGreaterThanOrEqual(8)
      expect(answers[13]).toMatch(/^From memory:[\s\S]*Maya/)
    }))

  it.effect("sync and queued writes of an assistant's turn keep its informative sentences in its own words", () =>
    Effect.gen(function*() {
      const { key, memories, openai, record, spaceId } = yield* setup
      const refusal = yield* Effect.flatMap(record("Assistant: I'm sorry, but I cannot help with that request."), (r) => decode(Stored)(r.body))
      expect(refusal.memories).toEqual([])
      const hedged = yield* Effect.flatMap(
        record("Assistant: I'm not sure, but the museum opens at 9. Would you like directions?"),
        (r) => decode(Stored)(r.body)
      )
      expect(hedged.memories.map((m) => m.content)).toEqual(["Assistant: The museum opens at 9."])

      const queued = yield* Effect.flatMap(record(`Assistant: ${NOTHING_REMEMBERED}`, { async: true }), (r) => decode(Queued)(r.body))
      let job: typeof Job.Type = { status: "queued", memory_ids: [] }
      for (let i = 0; i < 600 && job.status !== "completed"; i++) {
        yield* Effect.sleep("50 millis")
        job = yield* Effect.flatMap(call("GET", `/v1/spaces/${spaceId}/jobs/${queued.job_id}`, { token: key }), (r) => decode(Job)(r.body))
      }
      expect(job).toEqual({ status: "completed", memory_ids: [] })

      // Through an upstream that echoes: the answer is recorded as the assistant said it, first person and all.
      const said = "I have two cats and I'm learning Portuguese."
      const echoed = yield* Effect.promise(() => openai.chat.completions.create({ model: "echo", messages: [{ role: "user", content: said }] }))
      expect(echoed.choices[0]?.message.content).toBe(`echo: ${said}`)
      let answer: Listed | undefined
      for (let i = 0; i < 600 && answer === undefined; i++) {
        answer = (yield* memories).find((m) => roleOf(m) === "assistant")
        if (answer === undefined) yield* Effect.sleep("50 millis")
      }
      expect(answer?.text).toBe(`Assistant: echo: ${said}`)
    }))
}, undefined, { catalog: upstreamCatalog(upstream) })
