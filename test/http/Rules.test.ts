/**
 * A space's rules over real HTTP: the routes (owner on a session only), the
 * default api_key/redact rule, what is refused; then what the rules do on
 * every write path (record, queued record, batch, legacy add, document
 * upload, the proxy's stored turn, MCP record, memory edit): a redacted
 * secret is stored as `[REDACTED:api_key]` and found nowhere in the database
 * afterwards, a blocked item is refused naming the detector and never the
 * matched text, and each fires `security.policy_triggered` to the space's
 * webhooks. Last, a real `engram serve` at debug level: the secret is in none
 * of its log lines either.
 */
import type { WireBody } from "../../src/client/Wire.ts"
import { HttpServer } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, type Layer, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { join } from "node:path"
import OpenAI from "openai"
import { layerPglite, layerPostgres } from "../../services/store/Database.ts"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { copyTemplate } from "../support/Databases.ts"
import { type Account, addMember, call, callRaw, createKey, type Reply, signup } from "../support/Http.ts"
import { columnCount, whereStored } from "../support/Leaks.ts"
import { startServer, TEST_WEBHOOK_KEY, withDataDir } from "../support/Process.ts"
import { certificate, type Received, type Receiver, startReceiver } from "../support/Receiver.ts"
import { eachProfile } from "../support/Suite.ts"
import { startUpstream, upstreamCatalog } from "../support/Upstream.ts"

const upstream = await startUpstream()
afterAll(() => upstream.close())

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
/** Random letters and digits: what makes each secret of a test its own. */
const randomCore = (length: number) => randomBytes(length * 2).toString("base64").replace(/[^A-Za-z0-9]/g, "").slice(0, length)
/** An Anthropic-shaped key (the default rule's api_key detector knows the format) and its random part. */
const newSecret = () => {
  const core = randomCore(40)
  return { secret: `sk-ant-api03-${core}`, core }
}

// --- Wire shapes ---------------------------------------------------------------------------------

const ErrorBody = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.String, request_id: Schema.String }) })
const Rule = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  detector: Schema.String,
  pattern: Schema.NullOr(Schema.String),
  action: Schema.String,
  enabled: Schema.Boolean,
  created_at: Schema.String
})
const RuleList = Schema.Struct({ items: Schema.Array(Rule), total: Schema.Number })
const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const Memory = Schema.Struct({ id: Schema.String, text: Schema.String, context: Schema.String, metadata: Metadata })
const MemoryList = Schema.Struct({ items: Schema.Array(Memory), total: Schema.Number })
const Recorded = Schema.Struct({ memories: Schema.Array(Schema.Struct({ memory_id: Schema.String, content: Schema.String })) })
const Queued = Schema.Struct({ job_id: Schema.String })
const Uploaded = Schema.Struct({ job_ids: Schema.Array(Schema.String) })
const Job = Schema.Struct({
  status: Schema.String,
  items: Schema.Struct({ total: Schema.Number, queued: Schema.Number, completed: Schema.Number, failed: Schema.Number, cancelled: Schema.Number }),
  memory_ids: Schema.Array(Schema.String),
  error: Schema.NullOr(Schema.String)
})
const PolicyEvent = Schema.Struct({
  event: Schema.Literal("security.policy_triggered"),
  space_id: Schema.String,
  operation_id: Schema.String,
  status: Schema.String,
  timestamp: Schema.String,
  data: Schema.Struct({
    action: Schema.String,
    detector: Schema.String,
    matched_types: Schema.Array(Schema.String),
    message: Schema.String,
    document_id: Schema.optional(Schema.String)
  })
})
const ToolText = Schema.Struct({ isError: Schema.optional(Schema.Boolean), content: Schema.Array(Schema.Struct({ text: Schema.String })) })

const decode = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownSync(schema)
const errorOf = (reply: Reply) => decode(ErrorBody)(reply.body).error

/** `reply` has `status`, or the test fails showing the body. */
const expectStatus = (reply: Reply, status: number) => expect(reply.status, reply.text).toBe(status)

// --- A space and its writes ----------------------------------------------------------------------

const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "http://127.0.0.1")

/** An owner (session), a key of the organization and a new space. */
const setup = Effect.gen(function*() {
  const owner = yield* signup("rules")
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("rules")
  expectStatus(yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } }), 201)
  return { owner, key, spaceId, rules: `/v1/spaces/${spaceId}/rules` as const, base: yield* baseUrl }
})

const listRules = (owner: Account, path: `/v1/spaces/${string}/rules`) =>
  call("GET", path, { token: owner.token }).pipe(
    Effect.tap((reply) => expectStatus(reply, 200)),
    Effect.map((reply) => decode(RuleList)(reply.body))
  )

const addRule = (owner: Account, path: `/v1/spaces/${string}/rules`, json: WireBody<"POST", `/v1/spaces/${string}/rules`>) =>
  call("POST", path, { token: owner.token, json }).pipe(
    Effect.tap((reply) => expectStatus(reply, 201)),
    Effect.map((reply) => decode(Rule)(reply.body))
  )

const record = (key: string, spaceId: string, content: string, extra: Record<string, unknown> = {}) =>
  call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } })

const memories = (key: string, spaceId: string) =>
  call("GET", `/v1/spaces/${spaceId}/memories?limit=1000&prefer_observations=false`, { token: key }).pipe(
    Effect.tap((reply) => expectStatus(reply, 200)),
    Effect.map((reply) => decode(MemoryList)(reply.body).items)
  )

/** Everything of the space's memories a reader can see, as one string. */
const everything = (key: string, spaceId: string) =>
  Effect.map(memories(key, spaceId), (items) => JSON.stringify(items))

/** Polls a job until it has settled. */
const settled = (key: string, spaceId: string, jobId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const reply = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })
      expectStatus(reply, 200)
      const job = decode(Job)(reply.body)
      if (job.status !== "queued" && job.status !== "processing") return job
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`job ${jobId} did not settle`)
  })

/** Polls `read` until `done` holds of it (queued work lands in the background). */
const eventually = <A, R>(read: Effect.Effect<A, never, R>, done: (a: A) => boolean, what: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      const value = yield* read
      if (done(value)) return value
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`never happened: ${what}`)
  })

/** A multipart upload of text files, as a client sends it. */
const upload = (base: string, key: string, spaceId: string, files: ReadonlyArray<{ readonly name: string; readonly text: string }>) =>
  Effect.promise(async () => {
    const form = new FormData()
    for (const file of files) form.append("files", new Blob([file.text], { type: "text/markdown" }), file.name)
    const response = await fetch(`${base}/v1/spaces/${spaceId}/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: form
    })
    return { status: response.status, text: await response.text() }
  })

/** An MCP client of the official SDK, closed with the test's scope. */
const mcp = (base: string, key: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "engram-rules-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } }
      }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

const mcpRecord = (client: Client, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name: "record", arguments: args }, CallToolResultSchema)).pipe(
    Effect.map((result) => {
      const decoded = decode(ToolText)(result)
      return { isError: decoded.isError === true, text: decoded.content.map((c) => c.text).join("") }
    })
  )

/** One proxied chat turn through the official OpenAI client, on the upstream stand-in (which echoes the message). */
const proxied = (base: string, key: string, spaceId: string, content: string) =>
  Effect.promise(() =>
    new OpenAI({ baseURL: `${base}/v1`, apiKey: key, defaultHeaders: { "X-Svc-Space-Id": spaceId }, maxRetries: 0 })
      .chat.completions.create({ model: "echo", messages: [{ role: "user", content }] })
  )

const receiver = Effect.acquireRelease(Effect.promise(() => startReceiver()), (r) => Effect.promise(() => r.close()))

const policyHook = (key: string, spaceId: string, r: Receiver) =>
  call("POST", `/v1/spaces/${spaceId}/webhooks`, {
    token: key,
    json: { url: r.url, event_types: ["security.policy_triggered"] }
  }).pipe(Effect.tap((reply) => expectStatus(reply, 201)))

/** The policy events the receiver got, once there are `count` of them. */
const policyEvents = (r: Receiver, count: number) =>
  eventually(Effect.sync(() => [...r.received]), (got) => got.length >= count, `${count} policy deliveries`).pipe(
    Effect.map((got: ReadonlyArray<Received>) => got.map((x) => ({ raw: x.raw.toString("utf8"), event: decode(PolicyEvent)(x.json) })))
  )

const ROUTES = (rules: string) =>
  [
    ["GET", rules, undefined],
    ["POST", rules, { name: "Emails", detector: "email", action: "redact" }],
    ["PATCH", `${rules}/rul_x`, { enabled: false }],
    ["DELETE", `${rules}/rul_x`, undefined]
  ] as const

const transport = WebhookTransport.make({ allowPrivate: true, ca: certificate().cert })

eachProfile("rules", (it) => {
  // --- Routes ------------------------------------------------------------------------------------

  it.effect("a new space starts with one enabled api_key/redact rule, which its owner can remove", () =>
    Effect.gen(function*() {
      const { key, owner, rules, spaceId } = yield* setup
      const listed = yield* listRules(owner, rules)
      expect(listed.total).toBe(1)
      expect(listed.items[0]).toEqual({
        id: expect.stringMatching(/^rul_[A-Za-z0-9]{16}$/),
        name: "Redact API keys",
        detector: "api_key",
        pattern: null,
        action: "redact",
        enabled: true,
        created_at: expect.any(String)
      })
      // A space made by its first write gets the same rule.
      const written = unique("first-write")
      expectStatus(yield* record(key, written, "Ada likes tea."), 200)
      expect((yield* listRules(owner, `/v1/spaces/${written}/rules`)).items.map((r) => [r.detector, r.action, r.enabled]))
        .toEqual([["api_key", "redact", true]])

      // The rule is what redacts: once removed, a key is stored as written.
      const { secret } = newSecret()
      expectStatus(yield* callRaw("DELETE", `${rules}/${listed.items[0]!.id}`, { token: owner.token }), 204)
      expect((yield* listRules(owner, rules)).items).toEqual([])
      expectStatus(yield* record(key, spaceId, `Ada's deploy key is ${secret} for the staging cluster.`, { document_id: "d1" }), 200)
      expect(yield* everything(key, spaceId)).toContain(secret)
      // And the search the other tests rely on finds it in the store (a search that finds nothing would prove nothing).
      expect((yield* whereStored([secret])).some((column) => column.startsWith("public.memories."))).toBe(true)
    }))

  it.effect("create, list, update and delete rules", () =>
    Effect.gen(function*() {
      const { owner, rules } = yield* setup
      const created = yield* addRule(owner, rules, { name: "  Ticket ids  ", detector: "regex", pattern: "ACME-\\d{6}", action: "block" })
      expect(created).toEqual({
        id: expect.stringMatching(/^rul_/),
        name: "Ticket ids",
        detector: "regex",
        pattern: "ACME-\\d{6}",
        action: "block",
        enabled: true,
        created_at: expect.any(String)
      })
      expect(Date.parse(created.created_at)).toBeGreaterThan(Date.now() - 60_000)
      const disabled = yield* addRule(owner, rules, { name: "Emails", detector: "email", action: "redact", enabled: false })
      expect(disabled.enabled).toBe(false)
      expect((yield* listRules(owner, rules)).items.map((r) => r.name)).toEqual(["Redact API keys", "Ticket ids", "Emails"])

      const patched = yield* callRaw("PATCH", `${rules}/${created.id}`, { token: owner.token, json: { action: "redact", pattern: "ACME-\\d{8}" } })
      expectStatus(patched, 200)
      expect(decode(Rule)(patched.body)).toEqual({ ...created, action: "redact", pattern: "ACME-\\d{8}" })
      // Moving to a built-in detector drops the pattern.
      const moved = yield* callRaw("PATCH", `${rules}/${created.id}`, { token: owner.token, json: { detector: "us_ssn", name: "SSNs" } })
      expect(decode(Rule)(moved.body)).toMatchObject({ detector: "us_ssn", pattern: null, name: "SSNs", action: "redact" })
      expect((yield* listRules(owner, rules)).items.find((r) => r.id === created.id)).toEqual(decode(Rule)(moved.body))

      expectStatus(yield* callRaw("DELETE", `${rules}/${created.id}`, { token: owner.token }), 204)
      expect((yield* listRules(owner, rules)).items.map((r) => r.name)).toEqual(["Redact API keys", "Emails"])
      for (const [method, json] of [["DELETE", undefined], ["PATCH", { enabled: true }]] as const) {
        const gone = yield* callRaw(method, `${rules}/${created.id}`, { token: owner.token, ...(json ? { json } : {}) })
        expectStatus(gone, 404)
        expect(errorOf(gone).code).toBe("not_found")
      }
    }))

  it.effect("rules need a session (a key gets 401 session_required) of the owner (an admin or member gets 403 insufficient_role)", () =>
    Effect.gen(function*() {
      const { key, owner, rules } = yield* setup
      const admin = yield* addMember(owner, "admin")
      const member = yield* addMember(owner, "member")
      for (const [method, path, json] of ROUTES(rules)) {
        const byKey = yield* callRaw(method, path, { token: key, ...(json ? { json } : {}) })
        expectStatus(byKey, 401)
        expect(errorOf(byKey).code).toBe("session_required")
        for (const other of [admin, member]) {
          const refused = yield* callRaw(method, path, { token: other.token, ...(json ? { json } : {}) })
          expectStatus(refused, 403)
          expect(errorOf(refused).code).toBe("insufficient_role")
        }
      }
      expect((yield* listRules(owner, rules)).total).toBe(1)
    }))

  it.effect("another organization's space is 403 forbidden, an unknown space or rule 404 not_found", () =>
    Effect.gen(function*() {
      const { rules } = yield* setup
      const stranger = yield* signup("stranger")
      for (const [method, path, json] of ROUTES(rules)) {
        const foreign = yield* callRaw(method, path, { token: stranger.token, ...(json ? { json } : {}) })
        expectStatus(foreign, 403)
        expect(errorOf(foreign).code).toBe("forbidden")
        const missing = yield* callRaw(method, path.replace(/\/v1\/spaces\/[^/]+/, `/v1/spaces/${unique("nope")}`), {
          token: stranger.token,
          ...(json ? { json } : {})
        })
        expectStatus(missing, 404)
        expect(errorOf(missing).code).toBe("not_found")
      }
      const { owner, rules: mine } = yield* setup
      for (const [method, json] of [["PATCH", { enabled: false }], ["DELETE", undefined]] as const) {
        const unknown = yield* callRaw(method, `${mine}/rul_0000000000000000`, { token: owner.token, ...(json ? { json } : {}) })
        expectStatus(unknown, 404)
        expect(errorOf(unknown).code).toBe("not_found")
      }
    }))

  it.effect("422 validation_error for a pattern that does not compile or can backtrack catastrophically, a pattern on a built-in detector, and bad fields", () =>
    Effect.gen(function*() {
      const { owner, rules } = yield* setup
      const bad: ReadonlyArray<readonly [Record<string, unknown>, RegExp]> = [
        [{ name: "r", detector: "regex", pattern: "(unclosed", action: "redact" }, /does not compile/],
        [{ name: "r", detector: "regex", pattern: "[a-z", action: "redact" }, /does not compile/],
        [{ name: "r", detector: "regex", pattern: "(a+)+$", action: "block" }, /backtrack catastrophically/],
        [{ name: "r", detector: "regex", pattern: "^(\\w+\\s?)*$", action: "redact" }, /backtrack catastrophically/],
        [{ name: "r", detector: "regex", pattern: "(?<=key=)\\w+", action: "redact" }, /lookaround/],
        [{ name: "r", detector: "regex", pattern: "x*", action: "redact" }, /empty string/],
        [{ name: "r", detector: "regex", action: "redact" }, /needs a pattern/],
        [{ name: "r", detector: "email", pattern: "x@y", action: "redact" }, /only for the regex detector/],
        [{ name: "r", detector: "regex", pattern: "a".repeat(501), action: "redact" }, /pattern/],
        [{ name: "r", detector: "passport", action: "redact" }, /detector/],
        [{ name: "r", detector: "email", action: "mask" }, /action/],
        [{ name: "   ", detector: "email", action: "redact" }, /name/],
        [{ name: "r", detector: "email", action: "redact", extra: 1 }, /extra/]
      ]
      for (const [json, message] of bad) {
        const reply = yield* call("POST", rules, { token: owner.token, offContract: json })
        expectStatus(reply, 422)
        expect(errorOf(reply).code).toBe("validation_error")
        expect(errorOf(reply).message).toMatch(message)
      }
      const regex = yield* addRule(owner, rules, { name: "r", detector: "regex", pattern: "ACME-\\d{6}", action: "redact" })
      const [builtIn] = (yield* listRules(owner, rules)).items
      for (
        const [id, json] of [
          [regex.id, { pattern: "(x+x+)+y" }],
          [regex.id, { pattern: null }],
          [builtIn!.id, { pattern: "ACME" }],
          [builtIn!.id, { enabled: "yes" }]
        ] as const
      ) {
        const reply = yield* callRaw("PATCH", `${rules}/${id}`, { token: owner.token, json })
        expectStatus(reply, 422)
        expect(errorOf(reply).code).toBe("validation_error")
      }
      expect((yield* listRules(owner, rules)).items).toEqual([builtIn, regex])
    }))

  // --- Write paths -------------------------------------------------------------------------------

  it.scoped("a secret written through every path is redacted, and stored nowhere in the database", () =>
    Effect.gen(function*() {
      const { base, key, owner, rules, spaceId } = yield* setup
      yield* addRule(owner, rules, { name: "Tickets", detector: "regex", pattern: "TICKET-[A-Za-z0-9]{12}", action: "redact" })
      const { core, secret } = newSecret()
      const ticket = `TICKET-${randomCore(12)}`
      const said = (where: string) => `Caroline said the ${where} key for the billing service is ${secret}, filed as ${ticket}.`

      // POST /v1/record, synchronous: the answer and the memory carry the redaction; context and metadata too.
      const sync = yield* record(key, spaceId, said("record"), {
        context: `pasted from a chat: ${secret}`,
        metadata: { note: `key ${secret}`, nested: { keys: [secret, "plain"] } },
        document_id: "doc-record"
      })
      expectStatus(sync, 200)
      expect(sync.text).not.toContain(secret)
      expect(sync.text).toContain("[REDACTED:api_key]")
      const stored = (yield* memories(key, spaceId)).filter((m) => m.text.includes("[REDACTED:api_key]"))
      expect(stored.length).toBeGreaterThan(0)
      expect(stored[0]!.text).toContain("[REDACTED:regex]")
      expect(stored[0]!.context).toBe("pasted from a chat: [REDACTED:api_key]")
      expect(stored[0]!.metadata).toEqual({ note: "key [REDACTED:api_key]", nested: { keys: ["[REDACTED:api_key]", "plain"] } })

      // Queued: a record with async, a batch and the legacy add.
      const queued = yield* record(key, spaceId, said("queued"), { async: true })
      expectStatus(queued, 202)
      const batch = yield* call("POST", "/v1/record/batch", {
        token: key,
        json: { space_id: spaceId, items: [{ content: said("batch") }, { content: "Melanie paints sunrises every Sunday." }] }
      })
      expectStatus(batch, 202)
      for (const job of [decode(Queued)(queued.body).job_id, decode(Queued)(batch.body).job_id]) {
        expect((yield* settled(key, spaceId, job)).status).toBe("completed")
      }
      expectStatus(yield* call("POST", "/v1/memories", { token: key, json: { space_id: spaceId, content: said("legacy") } }), 200)

      // A document upload.
      const uploaded = yield* upload(base, key, spaceId, [{
        name: "runbook.md",
        text: `# Runbook\n\nThe deploy token for production is ${secret} and the ticket is ${ticket}.\n`
      }])
      expect(uploaded.status, uploaded.text).toBe(202)
      const [documentJob] = decode(Uploaded)(JSON.parse(uploaded.text)).job_ids
      expect((yield* settled(key, spaceId, documentJob!)).status).toBe("completed")

      // The proxy: the stand-in echoes the message, so both stored turns held the secret.
      const answer = yield* proxied(base, key, spaceId, `Remember that my staging key is ${secret} please.`)
      expect(answer.choices[0]!.message.content).toContain(secret)
      const turns = yield* eventually(
        memories(key, spaceId),
        (items) => items.filter((m) => m.metadata["source"] === "proxy").length >= 2,
        "the proxied turn is stored"
      )
      const proxyTurns = turns.filter((m) => m.metadata["source"] === "proxy")
      expect(proxyTurns.map((m) => m.metadata["role"]).sort()).toEqual(["assistant", "user"])
      for (const turn of proxyTurns) expect(turn.text).toContain("[REDACTED:api_key]")

      // MCP record.
      const client = yield* mcp(base, key)
      const viaMcp = yield* mcpRecord(client, { space_id: spaceId, content: said("mcp"), metadata: { from: secret } })
      expect(viaMcp.isError, viaMcp.text).toBe(false)
      expect(viaMcp.text).toContain("[REDACTED:api_key]")
      expect(viaMcp.text).not.toContain(secret)

      // Every path's memories are there, redacted; the secret is nowhere in what a reader sees.
      const all = yield* everything(key, spaceId)
      for (const where of ["record", "queued", "batch", "legacy", "mcp"]) expect(all).toContain(`the ${where} key`)
      expect(all).toContain("deploy token for production")
      expect(all).not.toContain(core)
      expect(all).not.toContain(ticket)

      // Nor in any column of any table: memories, history, jobs, documents, outbox, cluster messages.
      expect(yield* columnCount).toBeGreaterThan(100)
      expect(yield* whereStored([secret, core, ticket])).toEqual([])
    }), { timeout: 180_000 })

  it.scoped("a block rule refuses the item naming the detector, never the matched text; in a batch only that item fails", () =>
    Effect.gen(function*() {
      const { base, key, owner, rules, spaceId } = yield* setup
      yield* addRule(owner, rules, { name: "No SSNs", detector: "us_ssn", action: "block" })
      const ssn = `${100 + Math.floor(Math.random() * 500)}-${10 + Math.floor(Math.random() * 89)}-${1000 + Math.floor(Math.random() * 8999)}`
      const before = (yield* memories(key, spaceId)).length

      const refused = yield* record(key, spaceId, `Jon's social security number is ${ssn}.`)
      expectStatus(refused, 422)
      expect(errorOf(refused).code).toBe("validation_error")
      expect(errorOf(refused).message).toContain("us_ssn")
      expect(errorOf(refused).message).toContain("No SSNs")
      expect(refused.text).not.toContain(ssn)
      // Context and metadata are screened as well.
      const inMetadata = yield* record(key, spaceId, "Jon filed his taxes.", { metadata: { ssn } })
      expectStatus(inMetadata, 422)
      expect(inMetadata.text).not.toContain(ssn)
      expect((yield* memories(key, spaceId)).length).toBe(before)

      const batch = yield* call("POST", "/v1/record/batch", {
        token: key,
        json: {
          space_id: spaceId,
          items: [
            { content: "Jon opened a dance studio in Boston last spring." },
            { content: `Jon's SSN is ${ssn}, keep it safe.` },
            { content: "Gina moved her clothing store online in June." }
          ]
        }
      })
      expectStatus(batch, 202)
      const job = yield* settled(key, spaceId, decode(Queued)(batch.body).job_id)
      expect(job.status).toBe("completed")
      expect(job.items).toEqual({ total: 3, queued: 0, completed: 2, failed: 1, cancelled: 0 })
      expect(job.error).toContain("us_ssn")
      expect(job.error).not.toContain(ssn)
      const texts = (yield* memories(key, spaceId)).map((m) => m.text).join("\n")
      expect(texts).toContain("dance studio")
      expect(texts).toContain("clothing store")

      // A document holding it fails whole; MCP record is refused as a tool error.
      const uploaded = yield* upload(base, key, spaceId, [{ name: "hr.md", text: `# HR\n\nEmployee SSN: ${ssn}\n\nShe likes hiking.\n` }])
      expect(uploaded.status, uploaded.text).toBe(202)
      const documentJob = yield* settled(key, spaceId, decode(Uploaded)(JSON.parse(uploaded.text)).job_ids[0]!)
      expect(documentJob.status).toBe("failed")
      expect(documentJob.error).toContain("us_ssn")
      expect(documentJob.error).not.toContain(ssn)
      expect((yield* memories(key, spaceId)).map((m) => m.text).join("\n")).not.toContain("hiking")

      const client = yield* mcp(base, key)
      const viaMcp = yield* mcpRecord(client, { space_id: spaceId, content: `My SSN is ${ssn}.` })
      expect(viaMcp.isError).toBe(true)
      expect(viaMcp.text).toContain("validation_error")
      expect(viaMcp.text).toContain("us_ssn")
      expect(viaMcp.text).not.toContain(ssn)

      // The default rule turned to block refuses keys the same way.
      const [apiKeyRule] = (yield* listRules(owner, rules)).items
      expectStatus(yield* callRaw("PATCH", `${rules}/${apiKeyRule!.id}`, { token: owner.token, json: { action: "block" } }), 200)
      const { secret } = newSecret()
      const keyRefused = yield* record(key, spaceId, `The key is ${secret}.`)
      expectStatus(keyRefused, 422)
      expect(errorOf(keyRefused).message).toContain("api_key")
      expect(keyRefused.text).not.toContain(secret)

      expect(yield* whereStored([ssn, secret])).toEqual([])
    }), { timeout: 180_000 })

  it.effect("a disabled rule does nothing; a regex rule redacts as [REDACTED:regex]; changes apply to the next write", () =>
    Effect.gen(function*() {
      const { key, owner, rules, spaceId } = yield* setup
      const emails = yield* addRule(owner, rules, { name: "Emails", detector: "email", action: "redact", enabled: false })
      const verbatim = yield* call("PUT", `/v1/spaces/${spaceId}/extraction-settings`, { token: owner.token, json: { mode: "verbatim" } })
      expectStatus(verbatim, 200)
      const first = yield* record(key, spaceId, "Write to jon@example.com about order ORD-778899.")
      expect(decode(Recorded)(first.body).memories.map((m) => m.content)).toEqual(["Write to jon@example.com about order ORD-778899."])

      expectStatus(yield* callRaw("PATCH", `${rules}/${emails.id}`, { token: owner.token, json: { enabled: true } }), 200)
      yield* addRule(owner, rules, { name: "Orders", detector: "regex", pattern: "ORD-\\d{6}", action: "redact" })
      const second = yield* record(key, spaceId, "Write to ann@example.org about order ORD-112233.")
      expect(decode(Recorded)(second.body).memories.map((m) => m.content)).toEqual(["Write to [REDACTED:email] about order [REDACTED:regex]."])
    }))

  it.effect("an edit (PATCH .../memories/{memory_id}) is screened like a write", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const written = yield* record(key, spaceId, "Tim keeps the staging credentials in the team vault.")
      expectStatus(written, 200)
      const memoryId = decode(Recorded)(written.body).memories[0]!.memory_id
      const { core, secret } = newSecret()
      const edited = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, {
        token: key,
        json: { text: `Tim's staging key is ${secret}.`, context: `from ${secret}`, metadata: { key: secret } }
      })
      expectStatus(edited, 200)
      expect(edited.text).not.toContain(secret)
      expect(edited.text).toContain("[REDACTED:api_key]")
      expect(yield* whereStored([secret, core])).toEqual([])
    }))

  it.effect("a secret in a document's heading is stored nowhere either (headings become metadata and context)", () =>
    Effect.gen(function*() {
      const { base, key, spaceId } = yield* setup
      const { core, secret } = newSecret()
      const uploaded = yield* upload(base, key, spaceId, [{
        name: "keys.md",
        text: `# Keys\n\n## Staging ${secret}\n\nThe staging cluster runs in Frankfurt and is rebuilt every night.\n`
      }])
      expect(uploaded.status, uploaded.text).toBe(202)
      expect((yield* settled(key, spaceId, decode(Uploaded)(JSON.parse(uploaded.text)).job_ids[0]!)).status).toBe("completed")
      expect(yield* everything(key, spaceId)).toContain("Frankfurt")
      expect(yield* whereStored([secret, core])).toEqual([])
    }))

  // --- Webhooks ----------------------------------------------------------------------------------

  it.scoped("each redact or block fires security.policy_triggered with action, detector, matched_types, document_id and message", () =>
    Effect.gen(function*() {
      const r = yield* receiver
      const { base, key, owner, rules, spaceId } = yield* setup
      yield* policyHook(key, spaceId, r)
      yield* addRule(owner, rules, { name: "Emails", detector: "email", action: "redact" })
      yield* addRule(owner, rules, { name: "No SSNs", detector: "us_ssn", action: "block" })
      const { secret } = newSecret()

      const first = yield* record(key, spaceId, `Key ${secret}, write to ann@example.org.`, { document_id: "doc-ann" })
      expectStatus(first, 200)
      const [redacted] = yield* policyEvents(r, 1)
      expect(redacted!.event).toEqual({
        event: "security.policy_triggered",
        space_id: spaceId,
        operation_id: expect.stringMatching(/^op_/),
        status: "completed",
        timestamp: expect.any(String),
        data: {
          action: "redact",
          detector: "api_key",
          matched_types: ["api_key", "email"],
          document_id: "doc-ann",
          message: "redacted api_key, email before the item was stored"
        }
      })

      expectStatus(yield* record(key, spaceId, "Jon's SSN is 123-45-6789."), 422)
      const blocked = (yield* policyEvents(r, 2))[1]!
      expect(blocked.event.status).toBe("failed")
      expect(blocked.event.data).toMatchObject({ action: "block", detector: "us_ssn", matched_types: ["us_ssn"] })
      expect(blocked.event.data.message).toContain("No SSNs")
      expect(blocked.event.data.document_id).toBeUndefined()

      // A document's redactions are one event naming the document.
      const uploaded = yield* upload(base, key, spaceId, [{ name: "notes.md", text: `# Notes\n\nThe key is ${secret} for now.\n` }])
      const job = decode(Uploaded)(JSON.parse(uploaded.text)).job_ids[0]!
      expect((yield* settled(key, spaceId, job)).status).toBe("completed")
      const forDocument = (yield* policyEvents(r, 3))[2]!
      expect(forDocument.event.data).toMatchObject({ action: "redact", detector: "api_key", matched_types: ["api_key"] })
      expect(forDocument.event.data.document_id).toMatch(/^doc_/)

      // An edit's redaction is reported with the edit, and only when the edit is made: a memory that does not exist
      // (404) reports nothing, a blocked edit (422) reports its block.
      const missing = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/mem_missing`, { token: key, json: { text: "Mail bo@example.org." } })
      expectStatus(missing, 404)
      const memoryId = decode(Recorded)(first.body).memories[0]!.memory_id
      expectStatus(yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: key, json: { text: "Mail cy@example.org." } }), 200)
      const edited = (yield* policyEvents(r, 4))[3]!
      expect(edited.event.data).toMatchObject({ action: "redact", detector: "email", matched_types: ["email"] })
      const refusedEdit = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: key, json: { text: "SSN 123-45-6789." } })
      expectStatus(refusedEdit, 422)
      expect((yield* policyEvents(r, 5))[4]!.event.data).toMatchObject({ action: "block", detector: "us_ssn" })

      // A batch's redactions are reported with its job: one event per item a rule touched.
      const batch = yield* call("POST", "/v1/record/batch", {
        token: key,
        json: { space_id: spaceId, items: [{ content: "Write to di@example.org." }, { content: "Nothing secret here." }] }
      })
      expectStatus(batch, 202)
      expect((yield* settled(key, spaceId, decode(Queued)(batch.body).job_id)).status).toBe("completed")
      expect((yield* policyEvents(r, 6))[5]!.event.data).toMatchObject({ action: "redact", detector: "email" })
      // Nothing more was reported: in particular not the 404 edit's redaction.
      yield* Effect.sleep("1500 millis")
      expect(r.received.length).toBe(6)

      // No delivery carries what was matched.
      for (const delivery of yield* policyEvents(r, 6)) {
        expect(delivery.raw).not.toContain(secret)
        expect(delivery.raw).not.toContain("123-45-6789")
        expect(delivery.raw).not.toContain("ann@example.org")
      }
    }), { timeout: 120_000 })
}, undefined, { catalog: upstreamCatalog(upstream), transport })

// --- The logs of a real server -------------------------------------------------------------------

/** A server profile database for a child process, when DATABASE_URL and REDIS_URL are set. */
const serverDatabase = process.env.ENGRAM_TEST_TEMPLATE_DATABASE && process.env.REDIS_URL ? copyTemplate : undefined

/** Writes `secret` through every path of a running `engram serve`: record, queued, batch, legacy, upload, proxy, MCP. */
const writeEverywhere = async (url: string, secret: string) => {
  const post = async (path: string, token: string | undefined, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify(body)
    })
    return { status: response.status, body: await response.text() }
  }
  const signedUp = await post("/auth/signup", undefined, { email: `${unique("logs")}@example.test`, password: "long password", org_name: "logs" })
  const session = decode(Schema.Struct({ session_token: Schema.String }))(JSON.parse(signedUp.body)).session_token
  const key = decode(Schema.Struct({ raw_key: Schema.String }))(JSON.parse((await post("/v1/api-keys", session, { name: "k", env: "test" })).body)).raw_key
  const spaceId = unique("logs")
  const said = `Priya's production key is ${secret}, do not share it.`
  const results = [
    await post("/v1/record", key, { space_id: spaceId, content: said, metadata: { k: secret }, context: secret }),
    await post("/v1/record", key, { space_id: spaceId, content: said, async: true }),
    await post("/v1/record/batch", key, { space_id: spaceId, items: [{ content: said }, { content: "Priya likes tea." }] }),
    await post("/v1/memories", key, { space_id: spaceId, content: said }),
    await post("/v1/chat/completions", key, { messages: [{ role: "user", content: said }] }, { "x-svc-space-id": spaceId })
  ]
  const form = new FormData()
  form.append("files", new Blob([`# Keys\n\n${said}\n`], { type: "text/markdown" }), "keys.md")
  const uploaded = await fetch(`${url}/v1/spaces/${spaceId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
  const client = new Client({ name: "engram-logs-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }))
  const viaMcp = await client.callTool({ name: "record", arguments: { space_id: spaceId, content: said } }, CallToolResultSchema)
  await client.close()
  // Everything queued lands before the server stops.
  const jobs = [results[1]!, results[2]!].map((r) => decode(Queued)(JSON.parse(r.body)).job_id)
    .concat(decode(Uploaded)(JSON.parse(await uploaded.text())).job_ids)
  for (const job of jobs) {
    for (let i = 0; i < 600; i++) {
      const reply = await fetch(`${url}/v1/spaces/${spaceId}/jobs/${job}`, { headers: { authorization: `Bearer ${key}` } })
      const status = decode(Job)(await reply.json()).status
      if (status !== "queued" && status !== "processing") break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const listed = await fetch(`${url}/v1/spaces/${spaceId}/memories?limit=1000`, { headers: { authorization: `Bearer ${key}` } })
  return { statuses: [...results.map((r) => r.status), uploaded.status], mcpError: viaMcp.isError === true, memories: await listed.text() }
}

/** Waits for /health (startServer gives up after 60 s; a loaded machine may start a node from its sources slower). */
const ready = async (url: string) => {
  for (const deadline = Date.now() + 240_000; Date.now() < deadline;) {
    const healthy = await fetch(`${url}/health`).then((r) => r.ok, () => false)
    if (healthy) return
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`engram serve at ${url} did not answer /health`)
}

/** Runs `engram serve` at debug level, writes a secret everywhere, stops it; then searches its output and its database. */
const logCheck = async (env: Record<string, string>, database: () => Layer.Layer<SqlClient.SqlClient, unknown>) => {
  const { core, secret } = newSecret()
  const server = await startServer({ ...env, LOG_LEVEL: "debug", LOG_FORMAT: "json" })
  let written: Awaited<ReturnType<typeof writeEverywhere>>
  try {
    await ready(server.url)
    written = await writeEverywhere(server.url, secret)
    // The proxied turn is queued after the answer.
    await new Promise((resolve) => setTimeout(resolve, 1000))
  } finally {
    await server.stop()
  }
  expect(written.statuses).toEqual([200, 202, 202, 200, 200, 202])
  expect(written.mcpError).toBe(false)
  expect(written.memories).toContain("[REDACTED:api_key]")
  expect(written.memories).not.toContain(core)
  // The server did log (debug lines), and none of it holds the secret.
  expect(server.output().split("\n").length).toBeGreaterThan(10)
  expect(server.output()).not.toContain(core)
  const found = await Effect.runPromise(whereStored([secret, core]).pipe(Effect.provide(database()), Effect.scoped))
  expect(found).toEqual([])
}

describe("rules on a real engram serve", () => {
  it("a secret written through every path is in none of the server's log lines, at debug level, nor in its embedded store", async () => {
    await withDataDir((dataDir) => logCheck({ DATA_DIR: dataDir }, () => layerPglite({ dataDir: join(dataDir, "pglite") })))
  }, 420_000)

  it.skipIf(serverDatabase === undefined)(
    "the same on the server profile: none of the log lines, no column of the PostgreSQL database",
    async () => {
      const database = await serverDatabase!()
      try {
        await withDataDir((dataDir) =>
          logCheck(
            { DATA_DIR: dataDir, DATABASE_URL: database.url, REDIS_URL: process.env.REDIS_URL!, WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY },
            () => layerPostgres(Redacted.make(database.url), 2)
          )
        )
      } finally {
        await database.drop()
      }
    },
    420_000
  )
})

