/**
 * The rules every request meets at the edge, pinned by example: the string
 * rule (no NUL, no unpaired surrogate) on every field, query parameter and
 * path segment; JSON bodies only, valid UTF-8, at most 32 MiB (refused while
 * reading), nested at most 64 levels; metadata at most 32 levels and 64 KiB.
 */
import { expect } from "@effect/vitest"
import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { Effect, Option } from "effect"
import { request as httpRequest } from "node:http"
import { call, callRaw, createKey, type Reply, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

/** Marks a value, so a test can tell whether a message echoes it. */
const MARK = "Qzx7marker"
const POISONS = [["NUL", "\u0000"], ["high surrogate", "\ud800"], ["low surrogate", "\udfff"]] as const

const expectRefused = (reply: Reply, status: number, code: string, label: string) => {
  expect(reply.status, `${label}: ${reply.text.slice(0, 300)}`).toBe(status)
  expect(reply.body.error.code, label).toBe(code)
  expect(reply.body.error.request_id, label).toBe(reply.headers["x-request-id"])
  expect(reply.text, label).not.toContain(MARK)
}

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("edge")
  const made = yield* call("POST", "/v1/record", {
    token: key,
    json: { space_id: spaceId, content: "Priya keeps bees on the roof of her building." }
  })
  expect(made.status, made.text).toBe(200)
  return { owner, key, spaceId, memoryId: made.body.memories[0].memory_id as string }
})

/** Raw bytes on the wire, for bodies no JavaScript string can carry. */
const sendBytes = (path: string, bytes: Uint8Array, token: string, contentType = "application/json") =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const request = HttpClientRequest.post(path).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyUint8Array(bytes, contentType)
    )
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, body: JSON.parse(text), text } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

const port = Effect.map(Effect.serviceOption(HttpServer.HttpServer), (server) => {
  const address = Option.getOrThrow(server).address
  return address._tag === "TcpAddress" ? address.port : 0
})

interface Streamed {
  readonly status: number
  readonly body: any
  readonly sent: number
}

/**
 * Streams a body of endless 1 MiB chunks (no Content-Length) until the server
 * answers; resolves with the answer and how much had been sent by then. A
 * server that read everything before answering would never answer.
 */
const streamUntilAnswered = (portNumber: number, path: string, token: string, declaredLength?: number) =>
  Effect.async<Streamed, Error>((resume) => {
    const chunk = Buffer.alloc(1024 * 1024, "a")
    let sent = 0
    let answered = false
    const req = httpRequest({
      host: "127.0.0.1",
      port: portNumber,
      path,
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        ...(declaredLength === undefined ? {} : { "content-length": String(declaredLength) })
      }
    }, (res) => {
      answered = true
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (part: string) => (text += part))
      res.on("end", () => {
        req.destroy()
        resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text), sent }))
      })
    })
    req.on("error", (error) => {
      if (!answered) resume(Effect.fail(error))
    })
    const write = () => {
      // The declared case sends a few bytes only: the server must not wait for the rest.
      if (declaredLength !== undefined) return void req.write("{\"space_id\":")
      // One chunk per turn of the event loop: the answer is read as soon as it arrives, before more is sent
      // into a connection the server is closing (whose reset would discard an answer not yet read).
      if (answered || sent >= 512 * 1024 * 1024) return
      sent += chunk.length
      if (req.write(chunk)) setImmediate(write)
      else req.once("drain", write)
    }
    req.write("{\"space_id\":\"x\",\"content\":\"")
    write()
    return Effect.sync(() => req.destroy())
  })

eachProfile("input rules at the edge", (it) => {
  it.effect("NUL or an unpaired surrogate in any body field is 422 validation_error naming the field, never echoing it", () =>
    Effect.gen(function*() {
      const { owner, key, spaceId, memoryId } = yield* setup
      const cases = (bad: string): ReadonlyArray<readonly [label: string, method: "POST" | "PATCH" | "PUT", path: string, body: unknown, token: string]> => [
        ["content", "POST", "/v1/record", { space_id: spaceId, content: bad }, key],
        ["context", "POST", "/v1/record", { space_id: spaceId, content: "fine", context: bad }, key],
        ["document_id", "POST", "/v1/record", { space_id: spaceId, content: "fine", document_id: bad }, key],
        ["tags.1", "POST", "/v1/record", { space_id: spaceId, content: "fine", tags: ["ok", bad] }, key],
        ["user_id", "POST", "/v1/record", { space_id: spaceId, content: "fine", user_id: bad }, key],
        ["agent_id", "POST", "/v1/record", { space_id: spaceId, content: "fine", agent_id: bad }, key],
        ["session_id", "POST", "/v1/record", { space_id: spaceId, content: "fine", session_id: bad }, key],
        ["metadata", "POST", "/v1/record", { space_id: spaceId, content: "fine", metadata: { [bad]: 1 } }, key],
        ["metadata", "POST", "/v1/record", { space_id: spaceId, content: "fine", metadata: { a: [{ b: bad }] } }, key],
        ["content", "POST", "/v1/record", { space_id: spaceId, content: bad, async: true }, key],
        ["items.1.content", "POST", "/v1/record/batch", { space_id: spaceId, items: [{ content: "fine" }, { content: bad }] }, key],
        ["content", "POST", "/v1/memories", { space_id: spaceId, content: bad }, key],
        ["metadata", "POST", "/v1/memories", { space_id: spaceId, content: "fine", metadata: { note: bad } }, key],
        ["text", "PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { text: bad }, key],
        ["context", "PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { context: bad }, key],
        ["tags.0", "PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { tags: [bad] }, key],
        ["metadata", "PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { metadata: { k: bad } }, key],
        ["query", "POST", "/v1/retrieve", { space_id: spaceId, query: bad }, key],
        ["name", "POST", "/v1/spaces", { name: bad }, key],
        ["description", "POST", "/v1/spaces", { description: bad }, key],
        ["mission", "PUT", `/v1/spaces/${spaceId}/profile`, { mission: bad }, owner.token],
        ["name", "POST", "/v1/api-keys", { name: bad, env: "test" }, owner.token],
        ["email", "POST", "/auth/signup", { email: `a${bad}@example.test`, password: "long enough", org_name: "x" }, ""],
        ["org_name", "POST", "/auth/signup", { email: `${unique("u")}@example.test`, password: "long enough", org_name: bad }, ""],
        ["messages.0.content", "POST", "/v1/chat/completions", { space_id: spaceId, memory: false, messages: [{ role: "user", content: bad }] }, key],
        ["input", "POST", "/v1/responses", { space_id: spaceId, memory: false, input: bad }, key],
        ["system", "POST", "/v1/messages", { space_id: spaceId, memory: false, max_tokens: 50, system: bad, messages: [{ role: "user", content: "hi" }] }, key],
        ["user_id", "POST", "/v1/chat/completions", { space_id: spaceId, user_id: bad, messages: [{ role: "user", content: "hi" }] }, key]
      ]
      for (const [poison, char] of POISONS) {
        for (const [label, method, path, body, token] of cases(`${MARK} ${char} tail`)) {
          const reply = yield* callRaw(method, path, { json: body, ...(token === "" ? {} : { token }) })
          expectRefused(reply, 422, "validation_error", `${poison} in ${label} of ${method} ${path}`)
          expect(reply.body.error.message, `${poison} in ${label}`).toContain(label)
        }
      }
      // Nothing of it was stored: the space still holds its one memory, unchanged.
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(listed.body.items.map((m: any) => m.text)).toEqual(["Priya keeps bees on the roof of her building."])
    }))

  it.effect("query parameters and path segments follow the same rule; a URL that is not UTF-8 is 400", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      for (const path of [
        `/v1/spaces/${spaceId}/memories?q=${MARK}%00`,
        `/v1/spaces/${spaceId}/memories?user_id=${MARK}%00`,
        `/v1/spaces/${spaceId}/users/${MARK}%00/profile`,
        `/v1/spaces/${MARK}%00/memories`
      ]) {
        const reply = yield* callRaw("GET", path, { token: key })
        expectRefused(reply, 422, "validation_error", path)
        expect(reply.body.error.message).toMatch(/^(q|user_id|space_id): must not contain NUL/)
      }
      // A lone surrogate cannot be percent-encoded as UTF-8; its WTF-8 bytes are not UTF-8.
      for (const path of [`/v1/spaces/${spaceId}/users/${MARK}%ED%A0%80/profile`, `/v1/spaces/${spaceId}/memories?q=%FF${MARK}`]) {
        const reply = yield* callRaw("GET", path, { token: key })
        expectRefused(reply, 400, "bad_request", path)
        expect(reply.body.error.message).toContain("not valid UTF-8")
      }
    }))

  it.effect("a body that is not valid UTF-8 is 400 bad_request, never read with U+FFFD", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const encoder = new TextEncoder()
      for (const [label, bad] of [
        ["a stray continuation byte", [0x80]],
        ["0xFF", [0xff]],
        ["an overlong NUL", [0xc0, 0x80]],
        ["an encoded surrogate", [0xed, 0xa0, 0x80]],
        ["a truncated sequence", [0xe2, 0x82]]
      ] as const) {
        const bytes = Uint8Array.from([
          ...encoder.encode(`{"space_id":"${spaceId}","content":"Ana ${MARK} `),
          ...bad,
          ...encoder.encode(" likes tea"),
          ...encoder.encode("\"}")
        ])
        expectRefused(yield* sendBytes("/v1/record", bytes, key), 400, "bad_request", label)
        expectRefused(yield* sendBytes("/v1/chat/completions", bytes, key), 400, "bad_request", `${label} (proxy)`)
      }
      const reply = yield* sendBytes("/v1/record", Uint8Array.from([...encoder.encode("{\"content\":\""), 0xff, 0x22, 0x7d]), key)
      expect(reply.body.error.message).toBe("the request body is not valid UTF-8")
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })
      expect(listed.body.total).toBe(1)
    }))

  it.effect("a body over 32 MiB is 413 payload_too_large, refused while reading", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      const portNumber = yield* port
      // Chunked, endless: only a server that stops at the limit can answer.
      const streamed = yield* streamUntilAnswered(portNumber, "/v1/record", key)
      expect(streamed.status).toBe(413)
      expect(streamed.body.error.code).toBe("payload_too_large")
      expect(streamed.body.error.message).toContain("33554432 bytes")
      expect(streamed.sent).toBeLessThan(48 * 1024 * 1024)
      // A declared length over the limit is refused before any of the body is read.
      const declared = yield* streamUntilAnswered(portNumber, "/v1/chat/completions", key, 40 * 1024 * 1024)
      expect(declared.status).toBe(413)
      expect(declared.body.error.code).toBe("payload_too_large")
      // The server is fine afterwards.
      expect((yield* call("GET", "/health")).status).toBe(200)
    }))

  it.effect("a body that is not JSON by its Content-Type is 400; the labels curl and plain clients use still read as JSON", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const form = "--b\r\nContent-Disposition: form-data; name=\"space_id\"\r\n\r\nx\r\n--b--\r\n"
      for (const [type, raw] of [
        ["multipart/form-data; boundary=b", form],
        ["application/xml", "<record/>"],
        ["text/html", "<p>hi</p>"],
        ["application/octet-stream", "{}"]
      ] as const) {
        for (const path of ["/v1/record", "/v1/chat/completions", "/mcp", "/auth/signup"]) {
          const reply = yield* callRaw("POST", path, { token: key, raw, headers: { "content-type": type } })
          expectRefused(reply, 400, "bad_request", `${type} to ${path}`)
          expect(reply.body.error.message).toBe(`the request body must be JSON (application/json), not ${type.split(";")[0]}`)
        }
      }
      for (const type of ["application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded"]) {
        const reply = yield* call("POST", "/v1/record", {
          token: key,
          raw: JSON.stringify({ space_id: spaceId, content: "Omar repairs old bicycles.", async: true }),
          headers: { "content-type": type }
        })
        expect(reply.status, type).toBe(202)
      }
    }))

  it.effect("metadata nests at most 32 levels and weighs at most 64 KiB; a body nests at most 64 levels", () =>
    Effect.gen(function*() {
      const { key, spaceId, memoryId } = yield* setup
      const nested = (levels: number) => {
        let value: unknown = MARK
        for (let i = 1; i < levels; i++) value = { [`k${i}`]: value }
        return { top: value }
      }
      const write = (metadata: unknown) => call("POST", "/v1/record", { token: key, offContract: { space_id: spaceId, content: "Lia sails.", metadata, async: true } })
      expect((yield* write(nested(32))).status).toBe(202)
      const deep = yield* write(nested(33))
      expectRefused(deep, 422, "validation_error", "33 levels")
      expect(deep.body.error.message).toBe("metadata: must not nest deeper than 32 levels")
      const edit = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: key, json: { metadata: nested(40) } })
      expect(edit.body.error.message).toBe("metadata: must not nest deeper than 32 levels")

      const sized = (bytes: number) => ({ blob: "x".repeat(bytes - "{\"blob\":\"\"}".length) })
      expect((yield* write(sized(65_536))).status).toBe(202)
      const big = yield* write(sized(65_537))
      expectRefused(big, 422, "validation_error", "64 KiB + 1")
      expect(big.body.error.message).toBe("metadata: must be at most 65536 bytes as JSON")
      const huge = yield* write({ blob: `${MARK}${"y".repeat(20 * 1024 * 1024)}` })
      expectRefused(huge, 422, "validation_error", "20 MB")

      // Ten thousand levels never reach the parser: the raw text is scanned first (brackets inside strings do not count).
      const raw = `{"space_id":"${spaceId}","content":"[[[[{{{{","metadata":${"{\"a\":".repeat(10_000)}1${"}".repeat(10_000)}}`
      const wall = yield* call("POST", "/v1/record", { token: key, raw })
      expectRefused(wall, 422, "validation_error", "10,000 levels")
      expect(wall.body.error.message).toBe("the request body nests deeper than 64 levels")
      const proxied = yield* call("POST", "/v1/messages", { token: key, raw: `{"messages":${"[".repeat(65)}${"]".repeat(65)}}` })
      expect(proxied.body.error.message).toBe("the request body nests deeper than 64 levels")
      const strings = yield* call("POST", "/v1/record", {
        token: key,
        json: { space_id: spaceId, content: `${"[{".repeat(500)} brackets in text are only text`, async: true }
      })
      expect(strings.status).toBe(202)
    }))

  it.effect("no 400 or 422 message echoes what was sent", () =>
    Effect.gen(function*() {
      const { owner, key, spaceId, memoryId } = yield* setup
      const long = `${MARK}${"w".repeat(400)}`
      const replies: ReadonlyArray<readonly [string, Effect.Effect<Reply, never, HttpClient.HttpClient>]> = [
        ["batch of 101", call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: Array.from({ length: 101 }, () => ({ content: long })) } })],
        ["content of a number", call("POST", "/v1/record", { token: key, offContract: { space_id: spaceId, content: 5, context: long } })],
        ["too long a content", call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: long.repeat(300) } })],
        ["a bad space_id", call("POST", "/v1/record", { token: key, json: { space_id: long, content: "x" } })],
        ["a bad timestamp", call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "x", timestamp: long } })],
        ["an unknown long field", call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "x", [long]: 1 } })],
        ["a bad state", call("PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: key, offContract: { state: long } })],
        ["a bad memory_type", call("POST", "/v1/retrieve", { token: key, offContract: { space_id: spaceId, query: "x", memory_type: [long] } })],
        ["a bad limit", call("GET", `/v1/spaces/${spaceId}/memories?limit=${long}`, { token: key })],
        ["a bad env", call("POST", "/v1/api-keys", { token: owner.token, offContract: { name: "k", env: long } })],
        ["a bad email", call("POST", "/auth/signup", { json: { email: long, password: "long enough", org_name: "x" } })],
        ["a long model", call("POST", "/v1/chat/completions", { token: key, json: { model: long, messages: [{ role: "user", content: "hi" }] } })],
        ["a bad body tunable", call("POST", "/v1/chat/completions", { token: key, json: { memory_limit: long, messages: [{ role: "user", content: "hi" }] } })],
        ["a bad header tunable", call("POST", "/v1/chat/completions", { token: key, headers: { "x-svc-memory-limit": long }, json: { messages: [] } })],
        ["not JSON", call("POST", "/v1/record", { token: key, raw: `{"content": ${long}` })]
      ]
      for (const [label, send] of replies) {
        const reply = yield* send
        expect([400, 422], `${label}: ${reply.text.slice(0, 200)}`).toContain(reply.status)
        expect(reply.text, label).not.toContain(MARK)
        expect(reply.body.error.message.length, label).toBeLessThan(400)
      }
      const batch = yield* replies[0]![1]
      expect(batch.body.error.message).toBe("items: expected an array of at most 100 item(s)")
      const number = yield* replies[1]![1]
      expect(number.body.error.message).toBe("content: expected string")
    }))
})
