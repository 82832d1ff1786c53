/**
 * Property: no single bad input wedges the service or answers 5xx. Hostile
 * strings (NUL, lone surrogates high and low, odd but valid Unicode) go into
 * every field of every write path, and hostile shapes (deep nesting, huge
 * metadata, invalid UTF-8, wrong content types) into every JSON body. Each
 * answer must come within 2 s, be 2xx or a documented 4xx (a string that
 * breaks the rule: 422 naming the field, or 400 when it cannot even be a URL),
 * and a good write to the same space right after must succeed.
 */
import { expect } from "@effect/vitest"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, FastCheck as fc } from "effect"
import { call, callRaw, type RawOptions, createKey, type Reply, signup, uniqueEmail } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const MARK = "Qzx7"
const RUNS = 8
const BUDGET = "2 seconds"

/** Strings PostgreSQL refuses, decided here independently of the service's own rule. */
const wellFormed = (text: string) => {
  try {
    encodeURIComponent(text)
    return true
  } catch {
    return false
  }
}
const breaksRule = (text: string) => text.includes("\u0000") || !wellFormed(text)

const POISONS = ["\u0000", "\ud800", "\udbff", "\udc00", "\udfff", "\udc00\ud800", "a\ud83d", "\ude00b"]
const ODD = [
  "\u200b", "\u202e", "\ufeff", "\uffff", "\ufffe", "\u{1f600}", "e\u0301", "\u{10ffff}", "\u0085", "\u2028", "中文",
  "\\", "\"", "</script>", "%00", "\u0001", "\u007f", "\r\n", "${x}", "'; DROP TABLE memories; --"
]

/** Mostly poisoned, sometimes only odd; random code points around it may add a NUL of their own. */
const hostile = fc.record({
  head: fc.string({ maxLength: 6, unit: "binary" }),
  odd: fc.constantFrom(...ODD),
  poison: fc.option(fc.constantFrom(...POISONS), { nil: undefined, freq: 4 }),
  tail: fc.string({ maxLength: 6, unit: "binary" })
}).map(({ head, odd, poison, tail }) => `${MARK}${head}${odd}${poison ?? ""}${tail}`)

/** Percent-encodes what a URL can carry; a lone surrogate goes as its WTF-8 bytes (which are not UTF-8). */
const encodeSegment = (text: string) => {
  let out = ""
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    out += cp >= 0xd800 && cp <= 0xdfff
      ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join("")
      : encodeURIComponent(ch)
  }
  return out
}

interface Fixture {
  readonly token: string
  readonly key: string
  readonly spaceId: string
  readonly memoryId: string
}

interface Sent {
  readonly reply: Reply
  /** What the message of a refusal names. */
  readonly label: string
  /** MCP answers 200 and carries the refusal inside its tool result. */
  readonly tool?: boolean
  /** The value travelled in the URL. */
  readonly url?: boolean
}

const mcp = (fx: Fixture, args: Record<string, unknown>) =>
  call("POST", "/mcp", {
    token: fx.key,
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "record", arguments: args } }
  })

const toolError = (reply: Reply): { code: string; message: string } | undefined =>
  reply.body?.result?.isError === true ? JSON.parse(reply.body.result.content[0].text).error : undefined

const send = (label: string, method: "POST" | "PATCH" | "GET", path: string, options: RawOptions) =>
  Effect.map(callRaw(method, path, options), (reply): Sent => ({ reply, label }))

const noRecall = { "x-svc-memory": "false" }

/** Every write path, with each string field it takes: the request carrying `v` in `field`. */
const WRITE_PATHS: ReadonlyArray<{
  readonly name: string
  readonly fields: ReadonlyArray<string>
  readonly send: (fx: Fixture, field: string, v: string) => Effect.Effect<Sent, never, HttpClient.HttpClient>
}> = [
  ...[false, true].map((async) => ({
    name: `record (${async ? "async" : "sync"})`,
    fields: ["content", "context", "document_id", "tags", "user_id", "agent_id", "session_id", "metadata key", "metadata value", "timestamp"],
    send: (fx: Fixture, field: string, v: string) => {
      const body: Record<string, unknown> = { space_id: fx.spaceId, content: "Nadia grows tomatoes on her balcony.", async }
      if (field === "tags") body.tags = ["garden", v]
      else if (field === "metadata key") body.metadata = { [v]: 1 }
      else if (field === "metadata value") body.metadata = { source: { nested: [v] } }
      else body[field] = v
      const label = field === "tags" ? "tags.1" : field.startsWith("metadata") ? "metadata" : field
      return send(label, "POST", "/v1/record", { token: fx.key, json: body })
    }
  })),
  {
    name: "batch",
    fields: ["content", "context", "tags", "user_id", "metadata value"],
    send: (fx, field, v) => {
      const item: Record<string, unknown> = { content: "Omar fixes bicycles." }
      if (field === "tags") item.tags = [v]
      else if (field === "metadata value") item.metadata = { v }
      else item[field] = v
      const label = field === "tags" ? "items.1.tags.0" : field === "metadata value" ? "items.1.metadata" : `items.1.${field}`
      return send(label, "POST", "/v1/record/batch", {
        token: fx.key,
        json: { space_id: fx.spaceId, items: [{ content: "Ana paints." }, item] }
      })
    }
  },
  {
    name: "legacy add",
    fields: ["content", "context", "metadata key", "metadata value"],
    send: (fx, field, v) => {
      const body: Record<string, unknown> = { space_id: fx.spaceId, content: "Lena runs marathons." }
      if (field === "metadata key") body.metadata = { [v]: true }
      else if (field === "metadata value") body.metadata = { v }
      else body[field] = v
      return send(field.startsWith("metadata") ? "metadata" : field, "POST", "/v1/memories", { token: fx.key, json: body })
    }
  },
  {
    name: "PATCH memory",
    fields: ["text", "context", "tags", "metadata key", "metadata value"],
    send: (fx, field, v) => {
      const body: Record<string, unknown> = field === "tags"
        ? { tags: [v] }
        : field === "metadata key"
        ? { metadata: { [v]: 1 } }
        : field === "metadata value"
        ? { metadata: { a: { b: v } } }
        : { [field]: v }
      const label = field === "tags" ? "tags.0" : field.startsWith("metadata") ? "metadata" : field
      return send(label, "PATCH", `/v1/spaces/${fx.spaceId}/memories/${fx.memoryId}`, { token: fx.key, json: body })
    }
  },
  {
    name: "proxy chat completions",
    fields: ["user message", "system message", "content part", "model", "user_id"],
    send: (fx, field, v) => {
      const messages = field === "user message"
        ? [{ role: "user", content: v }]
        : field === "system message"
        ? [{ role: "system", content: v }, { role: "user", content: "hello" }]
        : field === "content part"
        ? [{ role: "user", content: [{ type: "text", text: v }] }]
        : [{ role: "user", content: "hello" }]
      const extra = field === "model" || field === "user_id" ? { [field]: v } : {}
      const label = field === "model" || field === "user_id" ? field : "messages.0.content"
      return send(label, "POST", "/v1/chat/completions", {
        token: fx.key,
        headers: noRecall,
        json: { space_id: fx.spaceId, messages, ...extra }
      })
    }
  },
  {
    name: "proxy responses",
    fields: ["input", "input message", "instructions", "model"],
    send: (fx, field, v) => {
      const body: Record<string, unknown> = field === "input message"
        ? { input: [{ role: "user", content: [{ type: "input_text", text: v }] }] }
        : field === "input"
        ? { input: v }
        : { input: "hello", [field]: v }
      return send(field === "input message" ? "input.0.content" : field, "POST", "/v1/responses", {
        token: fx.key,
        headers: noRecall,
        json: { space_id: fx.spaceId, ...body }
      })
    }
  },
  {
    name: "proxy messages",
    fields: ["message", "system", "system block", "model"],
    send: (fx, field, v) => {
      const body: Record<string, unknown> = { space_id: fx.spaceId, max_tokens: 64, messages: [{ role: "user", content: "hello" }] }
      if (field === "message") body.messages = [{ role: "user", content: [{ type: "text", text: v }] }]
      else if (field === "system block") body.system = [{ type: "text", text: v }]
      else body[field] = v
      const label = field === "message" ? "messages.0.content" : field === "system block" ? "system" : field
      return send(label, "POST", "/v1/messages", { token: fx.key, headers: noRecall, json: body })
    }
  },
  {
    name: "MCP record tool",
    fields: ["content", "tags", "user_id", "metadata key", "metadata value"],
    send: (fx, field, v) => {
      const args: Record<string, unknown> = { space_id: fx.spaceId, content: "Kai learns the cello." }
      if (field === "tags") args.tags = [v]
      else if (field === "metadata key") args.metadata = { [v]: 1 }
      else if (field === "metadata value") args.metadata = { v: [v] }
      else args[field] = v
      const label = field === "tags" ? "tags.0" : field.startsWith("metadata") ? "metadata" : field
      return Effect.map(mcp(fx, args), (reply): Sent => ({ reply, label, tool: true }))
    }
  },
  {
    name: "space create",
    fields: ["name", "description", "space_id"],
    send: (fx, field, v) => send(field, "POST", "/v1/spaces", { token: fx.key, json: { [field]: v } })
  },
  {
    name: "API key create",
    fields: ["name"],
    send: (fx, field, v) => send(field, "POST", "/v1/api-keys", { token: fx.token, json: { name: v, env: "test" } })
  },
  {
    name: "signup",
    fields: ["email", "org_name", "password"],
    send: (_fixture, field, v) => {
      const body = { email: uniqueEmail("hostile"), password: "long enough", org_name: "Hostile org", [field]: field === "email" ? `${v}@example.test` : `${v}-long-enough` }
      return send(field, "POST", "/auth/signup", { json: body })
    }
  },
  {
    name: "user-profile path",
    fields: ["user_id"],
    send: (fx, _field, v) =>
      Effect.map(
        call("GET", `/v1/spaces/${fx.spaceId}/users/${encodeSegment(v)}/profile`, { token: fx.key }),
        (reply): Sent => ({ reply, label: "user_id", url: true })
      )
  },
  {
    name: "memory list query",
    fields: ["q", "user_id", "agent_id", "document_id"],
    send: (fx, field, v) =>
      Effect.map(
        call("GET", `/v1/spaces/${fx.spaceId}/memories?${field}=${encodeSegment(v)}`, { token: fx.key }),
        (reply): Sent => ({ reply, label: field, url: true })
      )
  }
]

/** 2xx, and the 4xx the docs name for bad input (409: a name or id already taken). */
const DOCUMENTED = [200, 201, 202, 400, 404, 409, 413, 422]

const timed = <A, R>(effect: Effect.Effect<A, never, R>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const result = yield* effect.pipe(Effect.timeoutFail({ duration: BUDGET, onTimeout: () => new Error(`no answer within ${BUDGET}`) }))
    return { result, elapsed: Date.now() - started }
  })

/** A good write to the fixture's space still succeeds, promptly. */
const goodWrite = (fx: Fixture) =>
  Effect.gen(function*() {
    const { result, elapsed } = yield* timed(call("POST", "/v1/record", {
      token: fx.key,
      json: { space_id: fx.spaceId, content: "Mira waters the ferns every Tuesday." }
    }))
    expect(result.status, result.text.slice(0, 200)).toBe(200)
    expect(elapsed).toBeLessThan(2000)
  })

const checkString = (value: string, sent: Sent, elapsed: number, where: string) => {
  const { reply } = sent
  expect(elapsed, where).toBeLessThan(2000)
  expect(reply.status, `${where}: ${reply.text.slice(0, 200)}`).toBeLessThan(500)
  expect(DOCUMENTED, `${where}: ${reply.text.slice(0, 200)}`).toContain(reply.status)
  if (reply.status === 422) expect(reply.text, where).not.toContain(MARK)
  if (sent.tool === true) {
    expect(reply.status, where).toBe(200)
    const error = toolError(reply)
    if (breaksRule(value)) {
      expect(error?.code, where).toBe("validation_error")
      expect(error?.message, where).toContain(sent.label)
      expect(reply.text, where).not.toContain(MARK)
    }
    return
  }
  if (!breaksRule(value)) return
  if (sent.url === true && !wellFormed(value)) {
    expect(reply.status, where).toBe(400)
    expect(reply.body.error.message, where).toBe("the URL's percent-encoding is not valid UTF-8")
    return
  }
  expect(reply.status, `${where}: ${reply.text.slice(0, 200)}`).toBe(422)
  expect(reply.body.error.code, where).toBe("validation_error")
  expect(reply.body.error.message, where).toContain(sent.label)
  expect(reply.body.error.request_id, where).toBe(reply.headers["x-request-id"])
}

/** Routes taking a JSON body, each with the request carrying `text` in its main string field and optional metadata. */
const JSON_ROUTES: ReadonlyArray<{
  readonly name: string
  readonly metadata: boolean
  readonly build: (fx: Fixture, text: string, metadata?: unknown) => { path: string; token: string; body: unknown; tool?: boolean; patch?: boolean }
}> = [
  { name: "record", metadata: true, build: (fx, text, metadata) => ({ path: "/v1/record", token: fx.key, body: { space_id: fx.spaceId, content: text, metadata } }) },
  { name: "record async", metadata: true, build: (fx, text, metadata) => ({ path: "/v1/record", token: fx.key, body: { space_id: fx.spaceId, content: text, metadata, async: true } }) },
  { name: "batch", metadata: true, build: (fx, text, metadata) => ({ path: "/v1/record/batch", token: fx.key, body: { space_id: fx.spaceId, items: [{ content: text, metadata }] } }) },
  { name: "legacy add", metadata: true, build: (fx, text, metadata) => ({ path: "/v1/memories", token: fx.key, body: { space_id: fx.spaceId, content: text, metadata } }) },
  { name: "PATCH memory", metadata: true, build: (fx, text, metadata) => ({ path: `/v1/spaces/${fx.spaceId}/memories/${fx.memoryId}` as const, token: fx.key, patch: true, body: { text, metadata } }) },
  { name: "MCP record", metadata: true, build: (fx, text, metadata) => ({ path: "/mcp", token: fx.key, tool: true, body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "record", arguments: { space_id: fx.spaceId, content: text, metadata } } } }) },
  { name: "chat completions", metadata: false, build: (fx, text) => ({ path: "/v1/chat/completions", token: fx.key, body: { space_id: fx.spaceId, memory: false, messages: [{ role: "user", content: text }] } }) },
  { name: "responses", metadata: false, build: (fx, text) => ({ path: "/v1/responses", token: fx.key, body: { space_id: fx.spaceId, memory: false, input: text } }) },
  { name: "messages", metadata: false, build: (fx, text) => ({ path: "/v1/messages", token: fx.key, body: { space_id: fx.spaceId, memory: false, max_tokens: 64, messages: [{ role: "user", content: text }] } }) },
  { name: "space create", metadata: false, build: (fx, text) => ({ path: "/v1/spaces", token: fx.key, body: { name: text } }) },
  { name: "API key create", metadata: false, build: (fx, text) => ({ path: "/v1/api-keys", token: fx.token, body: { name: text, env: "test" } }) },
  { name: "signup", metadata: false, build: (_fixture, text) => ({ path: "/auth/signup", token: "", body: { email: uniqueEmail("shape"), password: "long enough", org_name: text } }) }
]

const nested = (levels: number): unknown => {
  let value: unknown = "leaf"
  for (let i = 1; i < levels; i++) value = i % 2 === 0 ? [value] : { k: value }
  return { top: value }
}

type Shape =
  | { readonly _tag: "DeepMetadata"; readonly levels: number }
  | { readonly _tag: "DeepBody"; readonly levels: number }
  | { readonly _tag: "HugeMetadata"; readonly bytes: number }
  | { readonly _tag: "InvalidUtf8"; readonly bytes: ReadonlyArray<number> }
  | { readonly _tag: "WrongType"; readonly type: string }
  | { readonly _tag: "OddMetadata"; readonly key: string }

const shape: fc.Arbitrary<Shape> = fc.oneof(
  fc.integer({ min: 33, max: 3000 }).map((levels) => ({ _tag: "DeepMetadata" as const, levels })),
  fc.integer({ min: 66, max: 20_000 }).map((levels) => ({ _tag: "DeepBody" as const, levels })),
  fc.integer({ min: 65_537, max: 400_000 }).map((bytes) => ({ _tag: "HugeMetadata" as const, bytes })),
  fc.constantFrom([0x80], [0xff], [0xfe, 0xff], [0xc0, 0x80], [0xc3], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82])
    .map((bytes) => ({ _tag: "InvalidUtf8" as const, bytes })),
  fc.constantFrom("multipart/form-data; boundary=x", "application/xml", "text/html", "application/octet-stream", "image/png", "text/csv")
    .map((type) => ({ _tag: "WrongType" as const, type })),
  fc.constantFrom(...ODD).map((key) => ({ _tag: "OddMetadata" as const, key: `${MARK}${key}` }))
)

/** Metadata shapes go to the routes that take metadata; the others to any route. */
const shapeAndRoute = shape.chain((s) => {
  const routes = s._tag === "DeepMetadata" || s._tag === "HugeMetadata" ? JSON_ROUTES.filter((r) => r.metadata) : JSON_ROUTES
  return fc.constantFrom(...routes).map((route) => ({ shape: s, route }))
})

const PLACEHOLDER = "@@PLACEHOLDER@@"

/** The body as bytes, the placeholder in its text replaced by `bad`. */
const withBytes = (body: unknown, bad: ReadonlyArray<number>) => {
  const encoded = new TextEncoder().encode(JSON.stringify(body))
  const marker = new TextEncoder().encode(PLACEHOLDER)
  const at = Buffer.from(encoded).indexOf(Buffer.from(marker))
  return Uint8Array.from([...encoded.subarray(0, at), ...bad, ...encoded.subarray(at + marker.length)])
}

const sendRaw = (method: "POST" | "PATCH", path: string, token: string, bytes: Uint8Array, contentType: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.bodyUint8Array(bytes, contentType))
    if (token !== "") request = HttpClientRequest.bearerToken(request, token)
    if (path === "/mcp") request = HttpClientRequest.setHeader(request, "accept", "application/json, text/event-stream")
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
    return { status: response.status, headers: response.headers, body, text } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

const sendShape = (fx: Fixture, route: (typeof JSON_ROUTES)[number], s: Shape) => {
  const text = "Sam keeps a reading diary."
  switch (s._tag) {
    case "DeepMetadata":
      return route.build(fx, text, nested(s.levels))
    case "HugeMetadata":
      return route.build(fx, text, { blob: `${MARK}${"z".repeat(s.bytes)}` })
    case "OddMetadata":
      return route.build(fx, text, route.metadata ? { [s.key]: s.key } : undefined)
    case "DeepBody": {
      const built = route.build(fx, text)
      return { ...built, raw: JSON.stringify(built.body).replace(/}$/, `,"extra":${"[".repeat(s.levels)}${"]".repeat(s.levels)}}`) }
    }
    case "InvalidUtf8":
      return route.build(fx, `Sam ${PLACEHOLDER} reads`)
    case "WrongType":
      return route.build(fx, text)
  }
}

const checkShape = (s: Shape, route: (typeof JSON_ROUTES)[number], reply: Reply, tool: boolean, where: string) => {
  expect(reply.status, `${where}: ${reply.text.slice(0, 200)}`).toBeLessThan(500)
  expect(DOCUMENTED, `${where}: ${reply.text.slice(0, 200)}`).toContain(reply.status)
  const refusal = tool && reply.status === 200 ? toolError(reply) : reply.body?.error
  switch (s._tag) {
    case "InvalidUtf8":
      expect(reply.status, where).toBe(400)
      expect(refusal?.message, where).toBe("the request body is not valid UTF-8")
      return
    case "WrongType":
      expect(reply.status, where).toBe(400)
      expect(refusal?.message, where).toContain("must be JSON")
      return
    case "DeepBody":
      expect(reply.status, where).toBe(422)
      expect(refusal?.message, where).toBe("the request body nests deeper than 64 levels")
      return
    case "DeepMetadata":
    case "HugeMetadata":
      expect(refusal?.code, where).toBe("validation_error")
      expect(reply.text, where).not.toContain(MARK)
      // Past 64 levels of the whole body (metadata sits up to 3 levels down) the body scan refuses it first.
      if (s._tag === "HugeMetadata" || s.levels <= 60) expect(refusal?.message, where).toContain("metadata")
      return
    case "OddMetadata":
      // Odd but valid keys and values are kept, never refused.
      if (route.metadata) expect(refusal, `${where}: ${reply.text.slice(0, 200)}`).toBeUndefined()
      return
  }
}

eachProfile("hostile input never wedges or 500s", (it) => {
  let fixture: Fixture | undefined
  const setup = Effect.suspend(() =>
    fixture !== undefined ? Effect.succeed(fixture) : Effect.gen(function*() {
      const owner = yield* signup("hostile")
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `hostile-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
      const made = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Tomas restores old clocks." } })
      expect(made.status, made.text).toBe(200)
      fixture = { token: owner.token, key, spaceId, memoryId: made.body.memories[0].memory_id }
      return fixture
    })
  )

  for (const path of WRITE_PATHS) {
    it.effect.prop(
      `hostile strings in every field: ${path.name}`,
      { value: hostile, field: fc.constantFrom(...path.fields) },
      ({ field, value }) =>
        Effect.gen(function*() {
          const fx = yield* setup
          const { result, elapsed } = yield* timed(path.send(fx, field, value))
          checkString(value, result, elapsed, `${path.name} / ${field} / ${JSON.stringify(value)}`)
          yield* goodWrite(fx)
        }),
      { timeout: 120_000, fastCheck: { numRuns: RUNS } }
    )
  }

  it.effect.prop(
    "hostile shapes in every JSON body: deep nesting, huge metadata, invalid UTF-8, wrong content types, odd keys",
    { pick: shapeAndRoute },
    ({ pick: { route, shape: s } }) =>
      Effect.gen(function*() {
        const fx = yield* setup
        const built = sendShape(fx, route, s)
        const contentType = s._tag === "WrongType" ? s.type : "application/json"
        const bytes = s._tag === "InvalidUtf8"
          ? withBytes(built.body, s.bytes)
          : new TextEncoder().encode("raw" in built ? built.raw : JSON.stringify(built.body))
        const { result, elapsed } = yield* timed(sendRaw(built.patch === true ? "PATCH" : "POST", built.path, built.token, bytes, contentType))
        const where = `${route.name} / ${s._tag} ${JSON.stringify({ ...s, bytes: undefined })}`
        expect(elapsed, where).toBeLessThan(2000)
        checkShape(s, route, result, built.tool === true, where)
        yield* goodWrite(fx)
      }),
    { timeout: 180_000, fastCheck: { numRuns: 48 } }
  )
})
