/**
 * The drop-in proxy, driven by the official OpenAI and Anthropic clients:
 * once on the built-in local engine and once through a stand-in
 * OpenAI-compatible upstream served inside the test.
 */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, expect } from "@effect/vitest"
import { Effect } from "effect"
import OpenAI from "openai"
import { baseUrl, call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"
import { startUpstream, upstreamCatalog } from "../support/Upstream.ts"

const upstream = await startUpstream()
afterAll(() => upstream.close())

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const base = yield* baseUrl
  const spaceId = unique("proxy")
  const put = (content: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } }).pipe(
      Effect.tap((r) => expect(r.status, r.text).toBe(200))
    )
  const openai = (headers: Record<string, string> = {}) =>
    new OpenAI({ baseURL: `${base}/v1`, apiKey: key, defaultHeaders: { "X-Svc-Space-Id": spaceId, ...headers }, maxRetries: 0 })
  const anthropic = (headers: Record<string, string> = {}) =>
    new Anthropic({ baseURL: base, apiKey: key, defaultHeaders: { "X-Svc-Space-Id": spaceId, ...headers }, maxRetries: 0 })
  return { owner, key, base, spaceId, put, openai, anthropic }
})

/** Polls the memory list until `predicate` holds (queued turns are stored in the background). */
const eventually = <A, R>(read: Effect.Effect<A, never, R>, predicate: (a: A) => boolean) =>
  Effect.gen(function*() {
    let last = yield* read
    for (let i = 0; i < 100 && !predicate(last); i++) {
      yield* Effect.sleep("50 millis")
      last = yield* read
    }
    return last
  })

/** Every memory of the space, in any state (a user's question is kept in state `question`). */
const memoriesOf = (key: string, spaceId: string) =>
  call("GET", `/v1/spaces/${spaceId}/memories?limit=100&state=all`, { token: key }).pipe(Effect.map((r) => (r.body?.items ?? []) as Array<any>))

eachProfile("proxy with the official clients", (it) => {
  it.effect("chat completions on the local engine recall memories, answer from them and record the turn", () =>
    Effect.gen(function*() {
      const { key, spaceId, put, openai } = yield* setup
      yield* put("Caroline: I adopted a golden retriever named Max last week.", { user_id: "caroline" })
      yield* put("Melanie: I painted a sunrise over the lake.")
      const client = openai({ "X-Svc-User-Id": "caroline" })
      const { data, response } = yield* Effect.promise(() =>
        // No model: the default (the balanced tier) answers.
        client.chat.completions.create({ messages: [{ role: "user", content: "What is the name of my dog?" }] } as any).withResponse()
      )
      const body = data as any
      expect(body.object).toBe("chat.completion")
      expect(body.model).toBe("engram/local-extractive-1")
      expect(body.choices[0].message.content).toContain("golden retriever named Max")
      expect(body.choices[0].finish_reason).toBe("stop")
      expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens)
      // Scoped to caroline: only her memory is visible.
      expect(body.memories_injected).toBe(1)
      expect(body.space_id).toBe(spaceId)
      expect(response.headers.get("x-svc-memories-injected")).toBe("1")
      expect(response.headers.get("x-svc-space-id")).toBe(spaceId)

      // The user's turn and the answer are one queued job: once the question is stored, so is whatever the answer gave.
      const stored = yield* eventually(memoriesOf(key, spaceId), (items) => items.some((m) => m.metadata?.role === "user"))
      const turn = stored.filter((m) => m.metadata?.source === "proxy")
      expect(turn.every((m) => m.user_id === "caroline")).toBe(true)
      // The answer only quoted a stored memory: it is not stored again beside it.
      expect(turn.map((m) => m.metadata.role)).toEqual(["user"])
      // The question states nothing: kept, in state question, so it never competes with the memory that answers it.
      expect(turn.map((m) => [m.text, m.state])).toEqual([["What is the name of Caroline's dog?", "question"]])
      expect(stored.filter((m) => m.text.includes("golden retriever"))).toHaveLength(1)
    }))

  it.effect("streamed chat completions: first chunk carries the memory fields, deltas join to the answer, usage, [DONE]", () =>
    Effect.gen(function*() {
      const { put, openai, spaceId } = yield* setup
      yield* put("Jon: My favourite band is Radiohead.")
      const client = openai()
      // Not recorded, so the streamed call below sees the same memories.
      const whole = (yield* Effect.promise(() =>
        client.chat.completions.create({ model: "local", messages: [{ role: "user", content: "Which band does Jon like?" }], auto_record: false } as any)
      )) as any
      const chunks: Array<any> = []
      const stream = yield* Effect.promise(() =>
        client.chat.completions.create({
          model: "local",
          messages: [{ role: "user", content: "Which band does Jon like?" }],
          stream: true,
          stream_options: { include_usage: true }
        })
      )
      yield* Effect.promise(async () => {
        for await (const chunk of stream) chunks.push(chunk)
      })
      expect(chunks[0].memories_injected).toBe(1)
      expect(chunks[0].space_id).toBe(spaceId)
      expect(chunks[0].choices[0].delta.role).toBe("assistant")
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")
      expect(text).toBe(whole.choices[0].message.content)
      expect(text).toContain("Radiohead")
      expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(3)
      expect(chunks.at(-2).choices[0].finish_reason).toBe("stop")
      expect(chunks.at(-1).choices).toEqual([])
      expect(chunks.at(-1).usage.completion_tokens).toBeGreaterThan(0)
    }))

  it.effect("responses, whole and streamed, with numbered events in the documented order", () =>
    Effect.gen(function*() {
      const { put, openai, key, base, spaceId } = yield* setup
      yield* put("Ines: I moved to Lisbon in 2021.")
      const client = openai()
      const whole = (yield* Effect.promise(() =>
        client.responses.create({
          input: [{ role: "user", content: [{ type: "input_text", text: "Where did Ines move?" }, { type: "input_image", image_url: "https://example.test/x.png" }] }],
          instructions: "Be brief.",
          auto_record: false
        } as any)
      )) as any
      expect(whole.object).toBe("response")
      expect(whole.status).toBe("completed")
      expect(whole.output_text).toContain("Lisbon")
      expect(whole.memories_injected).toBe(1)
      expect(whole.usage.total_tokens).toBe(whole.usage.input_tokens + whole.usage.output_tokens)

      const events: Array<any> = []
      const stream = yield* Effect.promise(() => client.responses.create({ model: "local", input: "Where did Ines move?", stream: true }))
      yield* Effect.promise(async () => {
        for await (const event of stream) events.push(event)
      })
      const types = [...new Set(events.map((e) => e.type))]
      expect(types).toEqual([
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed"
      ])
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
      const deltas = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("")
      const completed = events.at(-1).response
      expect(deltas).toBe(completed.output_text)
      expect(deltas).toBe(whole.output_text)
      expect(completed.usage.output_tokens).toBeGreaterThan(0)
      expect(completed.memories_injected).toBe(1)
      expect(completed.space_id).toBe(spaceId)

      // Raw wire: each event names itself in an `event:` line.
      const raw = yield* Effect.promise(() =>
        fetch(`${base}/v1/responses`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-svc-space-id": spaceId },
          body: JSON.stringify({ input: "Where did Ines move?", stream: true })
        }).then((r) => r.text())
      )
      expect(raw.startsWith("event: response.created\ndata: ")).toBe(true)
    }))

  it.effect("messages, whole and streamed, with x-api-key or Bearer", () =>
    Effect.gen(function*() {
      const { put, anthropic, key, base, spaceId } = yield* setup
      yield* put("Priya: I teach yoga on Tuesdays.")
      const client = anthropic()
      const whole = (yield* Effect.promise(() =>
        client.messages.create(
          { model: "local", max_tokens: 200, system: "Answer briefly.", messages: [{ role: "user", content: "When does Priya teach yoga?" }] },
          { headers: { "X-Svc-Auto-Record": "false" } }
        )
      )) as any
      expect(whole.type).toBe("message")
      expect(whole.role).toBe("assistant")
      expect(whole.content[0].text).toContain("Tuesdays")
      expect(whole.stop_reason).toBe("end_turn")
      expect(whole.memories_injected).toBe(1)
      expect(whole.space_id).toBe(spaceId)

      const stream = client.messages.stream({ model: "local", max_tokens: 200, messages: [{ role: "user", content: "When does Priya teach yoga?" }] })
      const seen: Array<string> = []
      stream.on("streamEvent", (event) => void seen.push(event.type))
      const final = yield* Effect.promise(() => stream.finalMessage())
      expect((final.content[0] as any).text).toBe(whole.content[0].text)
      expect(seen[0]).toBe("message_start")
      expect(seen.slice(-4)).toEqual(["content_block_delta", "content_block_stop", "message_delta", "message_stop"])
      expect(seen.filter((t) => t === "content_block_delta").length).toBeGreaterThan(3)

      const truncated = yield* Effect.promise(() =>
        client.messages.create({ model: "local", max_tokens: 2, messages: [{ role: "user", content: "When does Priya teach yoga?" }] })
      )
      expect(truncated.stop_reason).toBe("max_tokens")
      expect(truncated.usage.output_tokens).toBe(2)

      const bearer = yield* Effect.promise(() =>
        fetch(`${base}/v1/messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ max_tokens: 50, messages: [{ role: "user", content: "hi" }] })
        })
      )
      expect(bearer.status).toBe(200)
      // x-api-key is accepted only on messages.
      const elsewhere = yield* call("POST", "/v1/chat/completions", {
        headers: { "x-api-key": key },
        json: { messages: [{ role: "user", content: "hi" }] }
      })
      expect(elsewhere.status).toBe(401)
      expect(elsewhere.body.error.code).toBe("unauthorized")
      const missing = yield* call("POST", "/v1/messages", { token: key, json: { messages: [{ role: "user", content: "hi" }] } })
      expect(missing.status).toBe(400)
      expect(missing.body.error.code).toBe("bad_request")
    }))

  it.effect("through an upstream: memory block in the system prompt, unknown fields forwarded, the answering model's full id", () =>
    Effect.gen(function*() {
      const { put, openai, spaceId } = yield* setup
      yield* put("Omar: I grow olive trees in my garden.")
      const before = upstream.bodies.length
      const body = (yield* Effect.promise(() =>
        openai().chat.completions.create({
          model: "echo",
          messages: [{ role: "system", content: "You are kind." }, { role: "user", content: "What does Omar grow?" }],
          top_p: 0.3,
          stop: ["\n\n"],
          presence_penalty: 0.5,
          max_tokens: 40
        } as any)
      )) as any
      expect(body.model).toBe("upstream/echo-1")
      expect(body.choices[0].message.content).toBe("echo: What does Omar grow?")
      expect(body.usage).toEqual({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 })
      const sent = upstream.bodies[before]
      expect(sent.model).toBe("echo-1")
      expect(sent.top_p).toBe(0.3)
      expect(sent.stop).toEqual(["\n\n"])
      expect(sent.presence_penalty).toBe(0.5)
      expect(sent.max_tokens).toBe(40)
      expect(sent.space_id).toBeUndefined()
      expect(sent.messages[0].role).toBe("system")
      expect(sent.messages[0].content).toContain("olive trees")
      expect(sent.messages[0].content).toContain("You are kind.")
      expect(body.space_id).toBe(spaceId)

      // The fast tier points at the upstream too; streaming through it.
      const stream = yield* Effect.promise(() =>
        openai().chat.completions.create({ model: "fast", messages: [{ role: "user", content: "say something" }], stream: true })
      )
      let text = ""
      yield* Effect.promise(async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ""
      })
      expect(text).toBe("echo: say something")
    }))

  it.effect("every client call through the OpenAI-compatible upstream: responses and messages, whole and streamed", () =>
    Effect.gen(function*() {
      const { put, openai, anthropic } = yield* setup
      yield* put("Hugo: I cooked lentil soup for the neighbours.")
      const question = "What did Hugo cook?"
      const response = (yield* Effect.promise(() =>
        openai().responses.create({ model: "echo", input: question, instructions: "Be brief.", max_output_tokens: 30, top_p: 0.9 } as any)
      )) as any
      expect(response.model).toBe("upstream/echo-1")
      expect(response.output_text).toBe(`echo: ${question}`)
      const sent = upstream.bodies.at(-1)
      expect(sent.max_tokens).toBe(30)
      expect(sent.top_p).toBe(0.9)
      expect(sent.messages[0].content).toContain("lentil soup")
      expect(sent.messages[0].content).toContain("Be brief.")

      let streamed = ""
      const events = yield* Effect.promise(() => openai().responses.create({ model: "echo", input: question, stream: true }))
      yield* Effect.promise(async () => {
        for await (const event of events) if (event.type === "response.output_text.delta") streamed += event.delta
      })
      expect(streamed).toBe(`echo: ${question}`)

      const message = yield* Effect.promise(() =>
        anthropic().messages.create({ model: "echo", max_tokens: 40, messages: [{ role: "user", content: question }] })
      )
      expect(message.model).toBe("upstream/echo-1")
      expect((message.content[0] as any).text).toBe(`echo: ${question}`)
      expect(message.usage).toMatchObject({ input_tokens: 11, output_tokens: 5 })
      const final = yield* Effect.promise(() =>
        anthropic().messages.stream({ model: "echo", max_tokens: 40, messages: [{ role: "user", content: question }] }).finalMessage()
      )
      expect((final.content[0] as any).text).toBe(`echo: ${question}`)
    }))

  it.effect("an Anthropic provider answers through any format, whole and streamed", () =>
    Effect.gen(function*() {
      const { put, openai, anthropic } = yield* setup
      yield* put("Kemal: I repair vintage bicycles.")
      const before = upstream.bodies.length
      const whole = (yield* Effect.promise(() =>
        openai().chat.completions.create({ model: "claude-echo", messages: [{ role: "system", content: "Be terse." }, { role: "user", content: "What does Kemal repair?" }] })
      )) as any
      expect(whole.model).toBe("upstream/claude-echo-1")
      expect(whole.choices[0].message.content).toBe("echo: What does Kemal repair?")
      expect(whole.usage).toEqual({ prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 })
      const sent = upstream.bodies[before]
      expect(sent.model).toBe("upstream/claude-echo-1")
      expect(sent.system).toContain("vintage bicycles")
      expect(sent.system).toContain("Be terse.")
      expect(sent.messages).toEqual([{ role: "user", content: "What does Kemal repair?" }])
      const final = yield* Effect.promise(() =>
        anthropic().messages.stream({ model: "claude-echo", max_tokens: 64, messages: [{ role: "user", content: "What does Kemal repair?" }] }).finalMessage()
      )
      expect((final.content[0] as any).text).toBe("echo: What does Kemal repair?")
      expect(final.model).toBe("upstream/claude-echo-1")
      expect(final.usage.output_tokens).toBe(5)
    }))

  it.effect("precedence: body over header over chat settings over the platform default", () =>
    Effect.gen(function*() {
      const { key, put, spaceId } = yield* setup
      for (let i = 0; i < 8; i++) yield* put(`Lena: I planted ${i + 2} tulips in the garden today.`)
      const ask = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
        call("POST", "/v1/chat/completions", {
          token: key,
          headers: { "x-svc-space-id": spaceId, ...headers },
          json: { messages: [{ role: "user", content: "How many tulips did Lena plant?" }], auto_record: false, ...body }
        })
      expect((yield* ask({})).body.memories_injected).toBe(5)
      expect((yield* ask({}, { "x-svc-memory-limit": "3" })).body.memories_injected).toBe(3)
      expect((yield* ask({ memory_limit: 2 }, { "x-svc-memory-limit": "3" })).body.memories_injected).toBe(2)
      const settings = yield* call("PUT", `/v1/spaces/${spaceId}/chat-settings`, { token: key, json: { memory_limit: 4 } })
      expect(settings.status).toBe(200)
      expect((yield* ask({})).body.memories_injected).toBe(4)
      expect((yield* ask({}, { "x-svc-memory-limit": "1" })).body.memories_injected).toBe(1)
      expect((yield* ask({ memory: false })).body.memories_injected).toBe(0)
      expect((yield* ask({}, { "x-svc-memory": "false" })).body.memories_injected).toBe(0)
      // A token budget drops whole memories; it bounds the whole section, its frame (56 tokens) included.
      const budgeted = yield* ask({ memory_token_budget: 75 })
      expect(budgeted.body.memories_injected).toBe(1)
      // Space in the body wins over the header.
      const other = unique("other")
      const moved = yield* ask({ space_id: other })
      expect(moved.body.space_id).toBe(other)
      expect(moved.headers["x-svc-space-id"]).toBe(other)
      expect(moved.body.memories_injected).toBe(0)
    }))

  it.effect("bad tunables, unknown models and bodies answer the documented codes", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const chat = (json: unknown, headers: Record<string, string> = {}) =>
        call("POST", "/v1/chat/completions", { token: key, headers: { "x-svc-space-id": spaceId, ...headers }, json })
      const messages = [{ role: "user", content: "hello there" }]
      for (const [header, value] of [["x-svc-memory-limit", "many"], ["x-svc-memory-limit", "21"], ["x-svc-auto-record", "perhaps"], ["x-svc-memory-tokens", "-3"], ["x-svc-space-id", "bad space!"]]) {
        const reply = yield* chat({ messages }, { [header!]: value! })
        expect(reply.status, `${header}: ${value}`).toBe(400)
        expect(reply.body.error.code).toBe("invalid_tunable")
        expect(reply.body.error.message.toLowerCase()).toContain(header)
      }
      const body = yield* chat({ messages, memory_limit: 50 })
      expect(body.status).toBe(422)
      expect(body.body.error.code).toBe("validation_error")
      // A header that does not parse is refused even where the body sets the same tunable (the body would win).
      for (const [field, header, good, bad] of [
        ["memory_limit", "x-svc-memory-limit", 2, "lots"],
        ["memory", "x-svc-memory", false, "maybe"],
        ["space_id", "x-svc-space-id", spaceId, "bad space!"],
        ["user_id", "x-svc-user-id", "ann", ""]
      ] as const) {
        const both = yield* chat({ messages, [field]: good }, { [header]: bad })
        expect(both.status, header).toBe(400)
        expect(both.body.error.code, header).toBe("invalid_tunable")
        expect(both.body.error.message.toLowerCase(), header).toContain(header)
      }
      // A parseable header under a body field: the body wins.
      expect((yield* chat({ messages, memory: false }, { "x-svc-memory": "true" })).status).toBe(200)
      const model = yield* chat({ messages, model: "gpt-imaginary" })
      expect(model.status).toBe(400)
      expect(model.body.error.code).toBe("invalid_model")
      expect(model.body.error.message).toContain("gpt-imaginary")
      expect(model.body.error.message).toContain("local")
      expect((yield* chat({})).status).toBe(400)
      expect((yield* chat({ messages: "hi" })).body.error.code).toBe("validation_error")
      const notJson = yield* call("POST", "/v1/chat/completions", { token: key, raw: "{nope", headers: { "content-type": "application/json" } })
      expect(notJson.status).toBe(400)
      expect(notJson.body.error.request_id).toBe(notJson.headers["x-request-id"])
      expect((yield* callRaw("GET", "/v1/chat/completions", { token: key })).status).toBe(405)
      expect((yield* call("POST", "/v1/chat/completions", { json: { messages } })).status).toBe(401)
    }))

  it.effect("an upstream failure before the first token is a JSON error with a real status; auto_record off stores nothing", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const chat = (content: string, extra: Record<string, unknown> = {}) =>
        call("POST", "/v1/chat/completions", {
          token: key,
          headers: { "x-svc-space-id": spaceId },
          json: { model: "echo", messages: [{ role: "user", content }], ...extra }
        })
      const down = yield* chat("FAIL 503", { stream: true })
      expect(down.status).toBe(503)
      expect(down.headers["content-type"]).toContain("application/json")
      expect(down.body.error.code).toBe("model_unavailable")
      const busy = yield* chat("FAIL 429")
      expect(busy.status).toBe(429)
      expect(busy.body.error.code).toBe("model_throttled")

      const quiet = yield* chat("remember nothing of this please", { auto_record: false })
      expect(quiet.status).toBe(200)
      yield* Effect.sleep("300 millis")
      const items = yield* memoriesOf(key, spaceId)
      expect(items.filter((m) => m.metadata?.source === "proxy")).toEqual([])
    }))

  it.effect("an upstream answering a body of the wrong shape is an error naming it, in both wire formats, never an empty answer", () =>
    Effect.gen(function*() {
      const { key, openai, spaceId } = yield* setup
      const chat = (model: string, extra: Record<string, unknown> = {}) =>
        call("POST", "/v1/chat/completions", {
          token: key,
          headers: { "x-svc-space-id": spaceId, "x-svc-auto-record": "false" },
          json: { model, messages: [{ role: "user", content: "MALFORMED please" }], ...extra }
        })
      for (const model of ["echo", "claude-echo"]) {
        const before = upstream.bodies.length
        const whole = yield* chat(model)
        expect(whole.status).toBe(503)
        expect(whole.body.error.code).toBe("model_unavailable")
        expect(whole.body.error.message).toContain("cannot read")
        // The provider answered: a body it will send again is not retried.
        expect(upstream.bodies.length - before).toBe(1)

        // Streamed: the first word arrives, then the chunk whose text is a number ends the stream with an error.
        let streamed = ""
        const failure = yield* Effect.promise(async () => {
          const stream = await openai({ "X-Svc-Auto-Record": "false" }).chat.completions.create({
            model,
            stream: true,
            messages: [{ role: "user", content: "MALFORMED please" }]
          })
          try {
            for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? ""
            return "no error"
          } catch (error) {
            return String(error)
          }
        })
        expect(streamed).toBe("first")
        expect(failure).toContain("cannot read")
      }
    }))

  it.effect("retries a failing upstream with backoff; a model's requests_per_minute answers model_throttled", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const chat = (model: string, content: string) =>
        call("POST", "/v1/chat/completions", {
          token: key,
          headers: { "x-svc-space-id": spaceId, "x-svc-auto-record": "false" },
          json: { model, messages: [{ role: "user", content }] }
        })
      const word = unique("w").replace(/-/g, "")
      const before = upstream.bodies.length
      const flaky = yield* chat("echo", `FLAKY ${word}`)
      expect(flaky.status).toBe(200)
      expect(flaky.body.choices[0].message.content).toBe(`echo: FLAKY ${word}`)
      expect(upstream.bodies.slice(before).filter((b) => JSON.stringify(b).includes(word))).toHaveLength(2)

      // Two per minute in a sliding window: of five quick calls at most two succeed, even across a minute boundary
      // (fewer when an earlier run on the same Redis used the window).
      const statuses: Array<number> = []
      let throttled: any
      for (let i = 0; i < 5; i++) {
        const reply = yield* chat("tight", "hello")
        statuses.push(reply.status)
        if (reply.status === 429) throttled = reply
      }
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true)
      expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(2)
      expect(throttled.body.error.code).toBe("model_throttled")
      expect(throttled.body.error.message).toContain("2 requests per minute")
      const retryAfter = Number(throttled.headers["retry-after"])
      expect(retryAfter).toBeGreaterThanOrEqual(1)
      expect(retryAfter).toBeLessThanOrEqual(60)
    }))

  it.effect("a dropped streaming connection still records what was produced", () =>
    Effect.gen(function*() {
      const { key, spaceId, base } = yield* setup
      const controller = new AbortController()
      yield* Effect.promise(async () => {
        const response = await fetch(`${base}/v1/chat/completions`, {
          method: "POST",
          signal: controller.signal,
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-svc-space-id": spaceId },
          body: JSON.stringify({ model: "echo", stream: true, messages: [{ role: "user", content: "SLOW one two three four five six seven eight nine ten" }] })
        })
        const reader = response.body!.getReader()
        let seen = ""
        while (!seen.includes("two")) seen += new TextDecoder().decode((await reader.read()).value)
        controller.abort()
      })
      const items = yield* eventually(memoriesOf(key, spaceId), (list) => list.some((m) => m.metadata?.role === "assistant"))
      const answer = items.find((m) => m.metadata?.role === "assistant")
      expect(answer).toBeDefined()
      expect(answer.text).toContain("echo: SLOW")
      expect(answer.text).not.toContain("ten")
    }))

  it.effect("chat settings: nulls until set, PUT replaces, model stored resolved, DELETE idempotent; other organizations are refused", () =>
    Effect.gen(function*() {
      const { key, spaceId, put } = yield* setup
      yield* put("A first memory so the space exists.")
      const path = `/v1/spaces/${spaceId}/chat-settings` as const
      const empty = { space_id: spaceId, memory_limit: null, memory_token_budget: null, auto_record: null, memory: null, chat_model: null }
      expect((yield* call("GET", path, { token: key })).body).toEqual(empty)
      const first = yield* call("PUT", path, { token: key, json: { memory_limit: 3, auto_record: false, chat_model: "fast" } })
      expect(first.body).toEqual({ ...empty, memory_limit: 3, auto_record: false, chat_model: "upstream/echo-1" })
      const second = yield* call("PUT", path, { token: key, json: { memory: false } })
      expect(second.body).toEqual({ ...empty, memory: false })
      expect((yield* call("GET", path, { token: key })).body).toEqual({ ...empty, memory: false })
      const bad = yield* call("PUT", path, { token: key, json: { chat_model: "nope" } })
      expect(bad.status).toBe(400)
      expect(bad.body.error.code).toBe("unsupported_model")
      expect((yield* call("PUT", path, { token: key, json: { memory_limit: 0 } })).status).toBe(422)
      expect((yield* call("PUT", path, { token: key, offContract: { colour: "red" } })).status).toBe(422)
      expect((yield* call("DELETE", path, { token: key })).status).toBe(204)
      expect((yield* call("DELETE", path, { token: key })).status).toBe(204)
      expect((yield* call("GET", path, { token: key })).body).toEqual(empty)
      expect((yield* call("GET", `/v1/spaces/${unique("none")}/chat-settings`, { token: key })).status).toBe(404)

      const other = yield* signup("other")
      const otherKey = (yield* createKey(other.token)).raw_key
      expect((yield* call("GET", path, { token: otherKey })).status).toBe(403)
      const proxied = yield* call("POST", "/v1/chat/completions", {
        token: otherKey,
        json: { space_id: spaceId, messages: [{ role: "user", content: "what do you know?" }] }
      })
      expect(proxied.status).toBe(403)
      expect(proxied.body.error.code).toBe("forbidden")
      // The default space is created on first use, per organization.
      const first2 = yield* call("POST", "/v1/chat/completions", { token: otherKey, json: { messages: [{ role: "user", content: "hello" }] } })
      expect(first2.status).toBe(200)
      expect(first2.body.space_id).toBe("default")
      expect((yield* call("GET", "/v1/spaces/default", { token: otherKey })).status).toBe(200)
    }))

  it.effect("the model catalog: cheapest first, one default, tiers and short names", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      const reply = yield* call("GET", "/v1/models", { token: key })
      expect(reply.status).toBe(200)
      expect(reply.body.object).toBe("list")
      const [local, echo, tight, claude] = reply.body.data
      expect(tight.id).toBe("upstream/tight-1")
      expect(claude.id).toBe("upstream/claude-echo-1")
      expect(local).toMatchObject({
        id: "engram/local-extractive-1",
        object: "model",
        short_name: "local",
        alias: "balanced",
        default: true,
        relative_cost: 1
      })
      expect(echo).toMatchObject({ id: "upstream/echo-1", short_name: "echo", alias: "fast", default: false, requests_per_minute: 1000 })
      expect(echo.relative_cost).toBeGreaterThan(1)
      expect(reply.body.data.filter((m: any) => m.default)).toHaveLength(1)
      expect((yield* call("GET", "/v1/models")).status).toBe(401)
    }))
}, undefined, { catalog: upstreamCatalog(upstream) })
