import { expect } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option } from "effect"
import { LOCAL_MODEL_ID } from "../../services/llm/Catalog.ts"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"
import { readFenced } from "../support/Fenced.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

/** The test server's real address (the harness's HttpClient is already bound to it). */
const baseUrl = Effect.map(Effect.serviceOption(HttpServer.HttpServer), (server) =>
  HttpServer.formatAddress(Option.getOrThrow(server).address))

const transportFor = (base: string, key: string) =>
  new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers: { Authorization: `Bearer ${key}` } } })

/** An MCP client of the official SDK, connected with `key`, closed with the test's scope. */
const connect = (key: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const client = new Client({ name: "engram-test", version: "1.0.0" })
      const transport = transportFor(yield* baseUrl, key)
      yield* Effect.promise(() => client.connect(transport))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const tool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>).pipe(
    Effect.map((result) => {
      const first = result.content[0]
      const text = first?.type === "text" ? first.text : ""
      let body: any = result.structuredContent
      try {
        body ??= JSON.parse(text)
      } catch {
        body = text
      }
      return { isError: result.isError === true, text, body }
    })
  )

const owner = Effect.gen(function*() {
  const account = yield* signup()
  const key = (yield* createKey(account.token)).raw_key
  return { account, key }
})

const ALL_TOOLS = ["get_model", "get_profile", "get_user_profile", "list_spaces", "reason", "record", "retrieve"]

eachProfile("MCP", (it) => {
  it.scoped("lists the seven tools with their argument schemas", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      expect(client.getServerVersion()?.name).toBe("engram")
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((t) => t.name).sort()).toEqual(ALL_TOOLS)
      const record = tools.find((t) => t.name === "record")!
      expect(record.inputSchema.required).toEqual(expect.arrayContaining(["space_id", "content"]))
      expect(Object.keys(record.inputSchema.properties ?? {}).sort()).toEqual(
        ["agent_id", "content", "metadata", "session_id", "space_id", "tags", "timestamp", "user_id"]
      )
      expect(tools.find((t) => t.name === "retrieve")!.annotations?.readOnlyHint).toBe(true)
    }))

  it.scoped("record, then retrieve finds the memory and list_spaces lists its space", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      const spaceId = unique("mcp")
      const recorded = yield* tool(client, "record", {
        space_id: spaceId,
        content: "Audrey started learning the violin last spring.",
        timestamp: "2023-06-01T10:00:00Z",
        user_id: "audrey",
        metadata: { source: "mcp" },
        tags: ["music"]
      })
      expect(recorded.isError, recorded.text).toBe(false)
      expect(recorded.body.space_id).toBe(spaceId)
      expect(recorded.body.status).toBe("completed")
      const memoryId = recorded.body.memories[0].memory_id as string
      expect(memoryId).toMatch(/^mem_/)
      yield* tool(client, "record", { space_id: spaceId, content: "Tim collected fantasy novels for the book club." })

      const found = yield* tool(client, "retrieve", { space_id: spaceId, query: "Which instrument is Audrey learning?" })
      expect(found.isError, found.text).toBe(false)
      expect(found.body.results[0].memory_id).toBe(memoryId)
      expect(found.body.results[0].metadata).toEqual({ source: "mcp" })
      expect(found.body.usage.input_tokens).toBeGreaterThan(0)

      // Scope is strict, a single memory_type is accepted, and block format renders the context.
      const scoped = yield* tool(client, "retrieve", { space_id: spaceId, query: "violin", user_id: "someone-else" })
      expect(scoped.body.results).toEqual([])
      const block = yield* tool(client, "retrieve", {
        space_id: spaceId,
        query: "violin",
        user_id: "audrey",
        memory_type: "fact",
        format: "block",
        limit: 1
      })
      expect(block.isError, block.text).toBe(false)
      expect(block.body.results.map((r: any) => r.memory_id)).toEqual([memoryId])
      expect(readFenced(block.body.context).lines[0]).toMatch(/^1\. .*violin/)

      // The same memory is visible over the HTTP API.
      const http = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "violin" } })
      expect(http.body.results[0].memory_id).toBe(memoryId)

      const listed = yield* tool(client, "list_spaces", {})
      expect(listed.isError, listed.text).toBe(false)
      expect(listed.body.items.map((s: any) => s.space_id)).toContain(spaceId)
      expect(listed.body).toMatchObject({ limit: 100, offset: 0 })
      const paged = yield* tool(client, "list_spaces", { limit: 1, offset: 0 })
      expect(paged.body.items).toHaveLength(1)
      expect(paged.body.total).toBe(listed.body.total)
    }))

  it.scoped("get_model answers the default entry, resolves names, and names the served models for an unknown one", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      const catalog = yield* call("GET", "/v1/models", { token: key })
      const expected = catalog.body.data.find((m: any) => m.default)

      const byDefault = yield* tool(client, "get_model", {})
      expect(byDefault.isError, byDefault.text).toBe(false)
      expect(byDefault.body).toEqual(expected)
      expect(byDefault.body.default).toBe(true)
      expect((yield* tool(client, "get_model", { model: "balanced" })).body).toEqual(expected)
      expect((yield* tool(client, "get_model", { model: "local" })).body.id).toBe(LOCAL_MODEL_ID)
      expect((yield* tool(client, "get_model", { model: LOCAL_MODEL_ID })).body.short_name).toBe("local")

      const unknown = yield* tool(client, "get_model", { model: "gpt-nonexistent" })
      expect(unknown.isError).toBe(true)
      expect(unknown.body.error.code).toBe("unsupported_model")
      expect(unknown.body.error.message).toContain("gpt-nonexistent")
      expect(unknown.body.error.message).toContain(LOCAL_MODEL_ID)
      expect(unknown.body.error.request_id).toMatch(/^req_/)
    }))

  it.scoped("get_model with space_id and model_id reads a memory model; a missing one is model_error", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      const spaceId = unique("mcp-models")
      yield* tool(client, "record", { space_id: spaceId, content: "Audrey practises the violin every evening.", timestamp: "2024-02-01T10:00:00Z" })
      const created = yield* call("POST", `/v1/spaces/${spaceId}/models`, {
        token: key,
        json: { name: "Music", query: "Which instrument does Audrey play?", model_id: "music" }
      })
      expect(created.status).toBe(202)
      for (let i = 0; i < 300; i++) {
        const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${created.body.job_id}`, { token: key })
        if (job.body.status === "completed") break
        yield* Effect.sleep("100 millis")
      }
      const read = yield* tool(client, "get_model", { space_id: spaceId, model_id: "music" })
      expect(read.isError, read.text).toBe(false)
      expect(read.body).toEqual((yield* call("GET", `/v1/spaces/${spaceId}/models/music`, { token: key })).body)
      expect(read.body.content).toContain("violin")

      const missing = yield* tool(client, "get_model", { space_id: spaceId, model_id: "nothing-here" })
      expect(missing.isError).toBe(true)
      expect(missing.body.error.code).toBe("model_error")
      const half = yield* tool(client, "get_model", { model_id: "music" })
      expect(half.body.error.code).toBe("bad_request")
      const mixed = yield* tool(client, "get_model", { model: "local", space_id: spaceId, model_id: "music" })
      expect(mixed.body.error.code).toBe("validation_error")
      const malformed = yield* tool(client, "get_model", { space_id: spaceId, model_id: "Not-Valid" })
      expect(malformed.body.error.code).toBe("validation_error")
    }))

  it.scoped("reason answers from the space's memories with the chosen model", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      const spaceId = unique("reason")
      yield* tool(client, "record", { space_id: spaceId, content: "Audrey started learning the violin last spring." })
      yield* tool(client, "record", { space_id: spaceId, content: "Tim collected fantasy novels for the book club." })

      const answered = yield* tool(client, "reason", { space_id: spaceId, query: "Which instrument is Audrey learning?" })
      expect(answered.isError, answered.text).toBe(false)
      expect(answered.body.insights).toContain("violin")
      expect(answered.body.model).toBe(LOCAL_MODEL_ID)
      expect(answered.body.usage.input_tokens).toBeGreaterThan(0)
      expect(answered.body.usage.output_tokens).toBeGreaterThan(0)
      const quick = yield* tool(client, "reason", { space_id: spaceId, query: "violin", model: "local", depth: "quick" })
      expect(quick.isError, quick.text).toBe(false)
      expect(quick.body.model).toBe(LOCAL_MODEL_ID)

      const unserved = yield* tool(client, "reason", { space_id: spaceId, query: "violin", model: "gpt-nonexistent" })
      expect(unserved.isError).toBe(true)
      expect(unserved.body.error.code).toBe("unsupported_model")
      const badDepth = yield* tool(client, "reason", { space_id: spaceId, query: "violin", depth: "deep" })
      expect(badDepth.isError).toBe(true)
      const missing = yield* tool(client, "reason", { space_id: unique("nowhere"), query: "violin" })
      expect(missing.body.error.code).toBe("not_found")
    }))

  it.scoped("get_profile and get_user_profile read the space's profiles", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      const spaceId = unique("profiles")
      const recorded = yield* tool(client, "record", {
        space_id: spaceId,
        content: "Audrey started learning the violin last spring.",
        user_id: "audrey"
      })
      yield* tool(client, "record", { space_id: spaceId, content: "Tim collected fantasy novels for the book club.", user_id: "tim" })

      const profile = yield* tool(client, "get_profile", { space_id: spaceId })
      expect(profile.isError, profile.text).toBe(false)
      expect(profile.body).toEqual({
        space_id: spaceId,
        name: spaceId,
        mission: "",
        disposition: { skepticism: 3, literalism: 3, empathy: 3 }
      })
      expect((yield* tool(client, "get_profile", { space_id: unique("nowhere") })).body.error.code).toBe("not_found")

      const audrey = yield* tool(client, "get_user_profile", { space_id: spaceId, user_id: "audrey" })
      expect(audrey.isError, audrey.text).toBe(false)
      expect(audrey.body).toMatchObject({ space_id: spaceId, user_id: "audrey", memory_count: 1, context: null })
      expect(audrey.body.memories.map((m: any) => m.id)).toEqual([recorded.body.memories[0].memory_id])
      expect(audrey.body.last_active).not.toBeNull()

      const block = yield* tool(client, "get_user_profile", { space_id: spaceId, user_id: "audrey", format: "block", limit: 10 })
      expect(readFenced(block.body.context).lines[0]).toMatch(/^1\. .*violin/)
      const facts = yield* tool(client, "get_user_profile", { space_id: spaceId, user_id: "audrey", memory_type: "fact" })
      expect(facts.body.memory_count).toBe(1)

      const stranger = yield* tool(client, "get_user_profile", { space_id: spaceId, user_id: "nobody" })
      expect(stranger.body).toMatchObject({ memory_count: 0, first_seen: null, last_active: null, memories: [] })
      const noSpace = yield* tool(client, "get_user_profile", { space_id: unique("nowhere"), user_id: "audrey" })
      expect(noSpace.isError).toBe(true)
      expect(noSpace.body.error.code).toBe("space_not_found")
      const tooMany = yield* tool(client, "get_user_profile", { space_id: spaceId, user_id: "audrey", limit: 201 })
      expect(tooMany.isError).toBe(true)
      const budgetAlone = yield* tool(client, "get_user_profile", { space_id: spaceId, user_id: "audrey", context_max_tokens: 10 })
      expect(budgetAlone.body.error.code).toBe("validation_error")
    }))

  it.scoped("a missing or bad key answers the 401 envelope and the client cannot connect", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const client = new Client({ name: "engram-test", version: "1.0.0" })
      const refused = yield* Effect.flip(Effect.tryPromise(() => client.connect(transportFor(base, "svc_test_notarealkey"))))
      expect(String(refused.error)).toContain("unauthorized")

      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } }
      }
      const accept = { accept: "application/json, text/event-stream" }
      for (const token of [undefined, "svc_test_notarealkey", "nonsense"]) {
        const reply = yield* call("POST", "/mcp", { json: initialize, headers: accept, ...(token ? { token } : {}) })
        expect(reply.status).toBe(401)
        expect(reply.body.error.code).toBe("unauthorized")
        expect(reply.body.error.request_id).toBe(reply.headers["x-request-id"])
      }
      const wellFormed = `svc_test_${"A".repeat(44)}`
      const never = yield* call("POST", "/mcp", { json: initialize, headers: accept, token: wellFormed })
      expect(never.status).toBe(401)
      expect(never.body.error.code).toBe("invalid_api_key")
    }))

  it.effect("the wire: a JSON answer without a session, 405 for GET and DELETE, refusals in the envelope", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const accept = { accept: "application/json, text/event-stream" }
      const initialize = {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } }
      }
      const ok = yield* call("POST", "/mcp", { token: key, json: initialize, headers: accept })
      expect(ok.status).toBe(200)
      expect(ok.headers["content-type"]).toContain("application/json")
      expect(ok.headers["mcp-session-id"]).toBeUndefined()
      expect(ok.headers["x-request-id"]).toMatch(/^req_/)
      expect(ok.body.result.serverInfo.name).toBe("engram")

      // Stateless: a tool call needs no prior initialize; its error carries the HTTP request id.
      const missing = unique("nowhere")
      const toolCall = yield* call("POST", "/mcp", {
        token: key,
        headers: accept,
        json: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "retrieve", arguments: { space_id: missing, query: "x" } } }
      })
      expect(toolCall.status).toBe(200)
      expect(toolCall.body.result.isError).toBe(true)
      const error = JSON.parse(toolCall.body.result.content[0].text).error
      expect(error.code).toBe("not_found")
      expect(error.request_id).toBe(toolCall.headers["x-request-id"])

      for (const method of ["GET", "DELETE"] as const) {
        const reply = yield* callRaw(method, "/mcp", { token: key, headers: accept })
        expect(reply.status).toBe(405)
        expect(reply.body.error.code).toBe("method_not_allowed")
        expect(reply.headers["allow"]).toBe("POST")
      }

      const noAccept = yield* call("POST", "/mcp", { token: key, json: initialize })
      expect(noAccept.status).toBe(406)
      expect(noAccept.body.error.code).toBe("not_acceptable")
      expect(noAccept.body.error.message).toContain("text/event-stream")

      // A body that is not JSON is refused before the transport sees it, as on every route.
      const xml = yield* call("POST", "/mcp", { token: key, raw: "<x/>", headers: { ...accept, "content-type": "application/xml" } })
      expect(xml.status).toBe(400)
      expect(xml.body.error.code).toBe("bad_request")
      expect(xml.body.error.message).toContain("application/json")

      const badJson = yield* call("POST", "/mcp", { token: key, raw: "{not json", headers: { ...accept, "content-type": "application/json" } })
      expect(badJson.status).toBe(400)
      expect(badJson.body.error.code).toBe("bad_request")
      expect(badJson.body.error.message).toContain("Parse error")
    }))

  it.scoped("another organization's key cannot read or write the space", () =>
    Effect.gen(function*() {
      const a = yield* owner
      const b = yield* owner
      const spaceId = unique("private")
      const clientA = yield* connect(a.key)
      const clientB = yield* connect(b.key)
      expect((yield* tool(clientA, "record", { space_id: spaceId, content: "The vault code is kept by Marta." })).isError).toBe(false)

      const read = yield* tool(clientB, "retrieve", { space_id: spaceId, query: "vault code" })
      expect(read.isError).toBe(true)
      expect(read.body.error.code).toBe("forbidden")
      expect(read.text).not.toContain("Marta")
      const write = yield* tool(clientB, "record", { space_id: spaceId, content: "Marta left the company in May." })
      expect(write.isError).toBe(true)
      expect(write.body.error.code).toBe("forbidden")
      const listed = yield* tool(clientB, "list_spaces", {})
      expect(listed.body.items.map((s: any) => s.space_id)).not.toContain(spaceId)
      for (const [name, args] of [
        ["reason", { space_id: spaceId, query: "Who keeps the vault code?" }],
        ["get_profile", { space_id: spaceId }],
        ["get_user_profile", { space_id: spaceId, user_id: "anyone" }]
      ] as const) {
        const reply = yield* tool(clientB, name, args)
        expect(reply.isError, name).toBe(true)
        expect(reply.body.error.code, name).toBe("forbidden")
        expect(reply.text).not.toContain("Marta")
      }

      // A's space is unchanged by B's attempt.
      const still = yield* tool(clientA, "retrieve", { space_id: spaceId, query: "Marta" })
      expect(still.body.results.map((r: any) => r.content).join(" ")).not.toContain("left the company")
    }))

  it.scoped("unknown tools and invalid arguments are tool errors in the envelope, never a crash", () =>
    Effect.gen(function*() {
      const { key } = yield* owner
      const client = yield* connect(key)
      const spaceId = unique("args")

      const unknown = yield* tool(client, "delete_everything", {})
      expect(unknown.isError).toBe(true)
      expect(unknown.body.error.code).toBe("not_found")
      expect(unknown.body.error.message).toContain("delete_everything")
      expect(unknown.body.error.message).toContain("retrieve")
      expect(unknown.body.error.request_id).toMatch(/^req_/)

      // Refused by the advertised schema, with the HTTP API's codes: missing is bad_request, the rest validation_error.
      for (const [name, args, code, field] of [
        ["retrieve", { space_id: spaceId, query: "x", limit: 0 }, "validation_error", "limit"],
        ["retrieve", { space_id: spaceId, query: 5 }, "validation_error", "query"],
        ["record", { space_id: spaceId }, "bad_request", "content"],
        ["record", { space_id: spaceId, content: "x", colour: "red" }, "validation_error", "colour"],
        ["list_spaces", { limit: 5000 }, "validation_error", "limit"],
        ["record", { space_id: "../etc", content: "x" }, "validation_error", "space_id"]
      ] as const) {
        const reply = yield* tool(client, name, args)
        const label = `${name} ${JSON.stringify(args)}`
        expect(reply.isError, label).toBe(true)
        expect(Object.keys(reply.body), label).toEqual(["error"])
        expect(reply.body.error.code, label).toBe(code)
        expect(reply.body.error.message, label).toContain(field)
        expect(reply.body.error.request_id, label).toMatch(/^req_/)
      }

      // A value is never echoed back, whichever check refuses it.
      const distinctive = `Zanzibar-${"q".repeat(300)}`
      for (const [name, args] of [
        ["record", { space_id: distinctive, content: "x" }],
        ["record", { space_id: spaceId, content: 7, tags: [distinctive] }],
        ["retrieve", { space_id: spaceId, query: distinctive, limit: 500 }],
        ["record", { space_id: spaceId, content: `${distinctive}\u0000` }]
      ] as const) {
        const reply = yield* tool(client, name, args)
        expect(reply.isError, name).toBe(true)
        expect(reply.text, name).not.toContain("Zanzibar")
      }

      // Refused by the HTTP API's own rules, with its code.
      const reserved = yield* tool(client, "record", { space_id: spaceId, content: "Kate likes tea.", tags: ["svc:internal"] })
      expect(reserved.isError).toBe(true)
      expect(reserved.body.error.code).toBe("validation_error")
      expect(reserved.body.error.message).toContain("svc:")
      const badTime = yield* tool(client, "record", { space_id: spaceId, content: "Kate likes tea.", timestamp: "yesterday" })
      expect(badTime.body.error.code).toBe("validation_error")
      expect(badTime.body.error.message).toContain("timestamp")

      // The session still works after all of that.
      const fine = yield* tool(client, "record", { space_id: spaceId, content: "Kate likes green tea in the morning." })
      expect(fine.isError, fine.text).toBe(false)
    }))
})
