/**
 * The webhook endpoints: create (secret once), list (secret null), PATCH
 * (only sent fields; empty is no_fields), DELETE, the five-per-space limit,
 * every documented refusal of a URL (not HTTPS, credentials, loopback,
 * private, link-local, CGNAT, multicast, IPv6 unique-local and IPv4-mapped
 * forms, names that do not resolve), unknown event types, and isolation
 * between organizations. Secrets are stored sealed, never in the clear.
 */
import type { WireBody } from "../../src/client/Wire.ts"
import { expect } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `hooks-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const made = yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })
  expect(made.status, made.text).toBe(201)
  const hooks = `/v1/spaces/${spaceId}/webhooks` as const
  const create = (json: WireBody<"POST", typeof hooks>) => call("POST", hooks, { token: key, json })
  /** A body the contract does not take, to see the refusal. */
  const createOffContract = (json: unknown) => call("POST", hooks, { token: key, offContract: json })
  return { owner, key, spaceId, hooks, create, createOffContract }
})

eachProfile("webhook endpoints", (it) => {
  it.effect("create answers 201 with the secret once; list, PATCH and DELETE behave as documented", () =>
    Effect.gen(function*() {
      const { create, hooks, key, spaceId } = yield* setup
      const created = yield* create({ url: "https://localhost:9/hook" })
      expect(created.status, created.text).toBe(201)
      expect(created.body).toEqual({
        id: expect.stringMatching(/^wh_/),
        space_id: spaceId,
        url: "https://localhost:9/hook",
        event_types: ["memory.created"],
        enabled: true,
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{32}$/),
        created_at: expect.any(String),
        updated_at: expect.any(String)
      })
      const id = created.body.id

      const listed = yield* call("GET", hooks, { token: key })
      expect(listed.status).toBe(200)
      expect(listed.body.items).toHaveLength(1)
      expect(listed.body.items[0]).toMatchObject({ id, secret: null, enabled: true })

      // Only the fields sent change.
      const disabled = yield* callRaw("PATCH", `${hooks}/${id}`, { token: key, json: { enabled: false } })
      expect(disabled.status, disabled.text).toBe(200)
      expect(disabled.body).toMatchObject({ id, url: "https://localhost:9/hook", event_types: ["memory.created"], enabled: false, secret: null })
      const retyped = yield* callRaw("PATCH", `${hooks}/${id}`, {
        token: key,
        json: { event_types: ["memory.consolidated", "memory.created"], url: "https://127.0.0.1:9/other" }
      })
      expect(retyped.body).toMatchObject({ url: "https://127.0.0.1:9/other", event_types: ["memory.consolidated", "memory.created"], enabled: false })

      const empty = yield* callRaw("PATCH", `${hooks}/${id}`, { token: key, json: {} })
      expect(empty.status).toBe(400)
      expect(empty.body.error.code).toBe("no_fields")

      const missing = yield* callRaw("PATCH", `${hooks}/wh_nope`, { token: key, json: { enabled: true } })
      expect(missing.status).toBe(404)
      expect(missing.body.error.code).toBe("not_found")

      expect((yield* callRaw("DELETE", `${hooks}/${id}`, { token: key })).status).toBe(204)
      expect((yield* callRaw("DELETE", `${hooks}/${id}`, { token: key })).status).toBe(404)
      expect((yield* call("GET", hooks, { token: key })).body.items).toEqual([])
      expect((yield* callRaw("GET", `${hooks}/${id}/deliveries`, { token: key })).status).toBe(404)
    }))

  it.effect("a sixth webhook in a space is 409 webhook_limit_reached, also when created at once", () =>
    Effect.gen(function*() {
      const { create, hooks, key } = yield* setup
      const replies = yield* Effect.forEach(
        Array.from({ length: 7 }, (_, i) => i),
        (i) => create({ url: `https://localhost:9/hook-${i}` }),
        { concurrency: "unbounded" }
      )
      expect(replies.filter((r) => r.status === 201)).toHaveLength(5)
      const refused = replies.filter((r) => r.status !== 201)
      expect(refused).toHaveLength(2)
      for (const reply of refused) {
        expect(reply.status).toBe(409)
        expect(reply.body.error.code).toBe("webhook_limit_reached")
      }
      expect((yield* call("GET", hooks, { token: key })).body.items).toHaveLength(5)
    }))

  it.effect("event types: the default, unknown ones (422 unknown_event_type), malformed bodies", () =>
    Effect.gen(function*() {
      const { create, createOffContract } = yield* setup
      const unknown = yield* create({ url: "https://localhost:9/hook", event_types: ["memory.created", "memory.exploded"] })
      expect(unknown.status).toBe(422)
      expect(unknown.body.error.code).toBe("unknown_event_type")
      expect(unknown.body.error.message).toContain("memory.exploded")
      const all = yield* create({ url: "https://localhost:9/hook", event_types: ["memory.created", "memory.consolidated", "security.policy_triggered"] })
      expect(all.status, all.text).toBe(201)

      for (const body of [{ url: 7 }, { url: "https://localhost:9/", event_types: [] }, { url: "https://localhost:9/", enabled: "yes" }, { url: "https://localhost:9/", colour: "red" }]) {
        const reply = yield* createOffContract(body)
        expect(reply.status, JSON.stringify(body)).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
      const noUrl = yield* createOffContract({ event_types: ["memory.created"] })
      expect(noUrl.status).toBe(400)
      expect(noUrl.body.error.code).toBe("bad_request")
      const http = yield* create({ url: "http://localhost:9/hook" })
      expect(http.status).toBe(422)
      expect(http.body.error.code).toBe("invalid_webhook_url")
    }))

  it.effect("another organization's space is 403 and its webhooks are out of reach; an unknown space is 404", () =>
    Effect.gen(function*() {
      const { create, hooks, key, spaceId } = yield* setup
      const id = (yield* create({ url: "https://localhost:9/hook" })).body.id
      const stranger = yield* signup("stranger")
      const strangerKey = (yield* createKey(stranger.token)).raw_key
      for (
        const [method, path, json] of [
          ["GET", hooks, undefined],
          ["POST", hooks, { url: "https://localhost:9/x" }],
          ["PATCH", `${hooks}/${id}`, { enabled: false }],
          ["DELETE", `${hooks}/${id}`, undefined],
          ["GET", `${hooks}/${id}/deliveries`, undefined]
        ] as const
      ) {
        const reply = yield* callRaw(method, path, { token: strangerKey, ...(json ? { json } : {}) })
        expect(reply.status, `${method} ${path}`).toBe(403)
        expect(reply.body.error.code).toBe("forbidden")
      }
      const unknown = yield* call("GET", `/v1/spaces/none-${Date.now()}/webhooks`, { token: key })
      expect(unknown.status).toBe(404)
      expect((yield* call("GET", hooks)).status).toBe(401)
      // Still there, unchanged.
      expect((yield* call("GET", hooks, { token: key })).body.items[0]).toMatchObject({ id, enabled: true })
      void spaceId
    }))

  it.effect("the secret is stored sealed: the database holds no copy of it in the clear", () =>
    Effect.gen(function*() {
      const { create } = yield* setup
      const created = yield* create({ url: "https://localhost:9/hook" })
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ secret_sealed: string }>`SELECT secret_sealed FROM webhooks WHERE webhook_id = ${created.body.id}`
      expect(rows).toHaveLength(1)
      expect(rows[0]!.secret_sealed.startsWith("v1.")).toBe(true)
      expect(rows[0]!.secret_sealed).not.toContain(created.body.secret)
      expect(rows[0]!.secret_sealed).not.toContain(created.body.secret.slice(6))
    }))
})

eachProfile("webhook URLs are refused unless public (WEBHOOK_ALLOW_PRIVATE off)", (it) => {
  it.effect("not HTTPS, credentials, this machine, private, link-local, CGNAT, multicast, IPv6 forms, unresolvable names: 422 invalid_webhook_url", () =>
    Effect.gen(function*() {
      const { create, hooks, key } = yield* setup
      const refused = [
        "http://example.com/hook",
        "ftp://example.com/hook",
        "not a url",
        "https://user:pass@example.com/hook",
        "https://user@93.184.215.14/hook",
        "https://localhost/hook",
        "https://api.localhost/hook",
        "https://127.0.0.1/hook",
        "https://127.1.2.3:8443/hook",
        "https://0.0.0.0/hook",
        "https://10.1.2.3/hook",
        "https://172.16.0.1/hook",
        "https://172.31.255.255/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/hook",
        "https://100.127.255.254/hook",
        "https://224.0.0.1/hook",
        "https://239.255.255.250/hook",
        "https://255.255.255.255/hook",
        "https://[::1]/hook",
        "https://[::]/hook",
        "https://[fd00::1]/hook",
        "https://[fc00::5]/hook",
        "https://[fe80::1]/hook",
        "https://[ff02::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://[::ffff:a9fe:a9fe]/hook",
        "https://[64:ff9b::10.0.0.1]/hook",
        "https://2130706433/hook", // 127.0.0.1 written as one number
        "https://0x7f000001/hook",
        "https://does-not-exist.invalid/hook"
      ]
      for (const url of refused) {
        const reply = yield* create({ url })
        expect(reply.status, url).toBe(422)
        expect(reply.body.error.code, url).toBe("invalid_webhook_url")
      }
      // Public addresses are accepted (no lookup needed for a literal).
      for (const url of ["https://93.184.215.14/hook", "https://[2606:4700:4700::1111]/hook", "https://8.8.8.8:8443/x?y=1"]) {
        const reply = yield* create({ url })
        expect(reply.status, `${url}: ${reply.text}`).toBe(201)
      }
      const id = (yield* call("GET", hooks, { token: key })).body.items[0].id
      const patched = yield* callRaw("PATCH", `${hooks}/${id}`, { token: key, json: { url: "https://192.168.0.10/hook" } })
      expect(patched.status).toBe(422)
      expect(patched.body.error.code).toBe("invalid_webhook_url")
    }))
}, { webhookAllowPrivate: false })
