import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const expect401 = (reply: { status: number; body: any; headers: Record<string, string> }, code: string) => {
  expect(reply.status).toBe(401)
  expect(reply.body.error.code).toBe(code)
  expect(reply.body.error.request_id).toBe(reply.headers["x-request-id"])
}

eachProfile("API keys", (it) => {
  it.effect("create returns the raw key once; list shows only the prefix", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const created = yield* call("POST", "/v1/api-keys", { token: owner.token, json: { name: "ci", env: "live" } })
      expect(created.status).toBe(201)
      const key = created.body
      expect(key.raw_key).toMatch(/^svc_live_[A-Za-z0-9]{44}$/)
      expect(key.raw_key.startsWith(key.key_prefix)).toBe(true)
      expect(key.key_prefix.length).toBeLessThan(key.raw_key.length - 30)
      expect(key).toMatchObject({ name: "ci", env: "live", expires_at: null, status: "active" })
      expect(typeof key.id).toBe("string")
      expect(Date.parse(key.created_at)).not.toBeNaN()

      const test = yield* createKey(owner.token, { name: "sandbox", env: "test", expires_in_days: 30 })
      expect(test.raw_key).toMatch(/^svc_test_[A-Za-z0-9]{44}$/)
      const days = (Date.parse(test.expires_at!) - Date.now()) / 86_400_000
      expect(days).toBeGreaterThan(29.9)
      expect(days).toBeLessThanOrEqual(30)

      const listed = yield* call("GET", "/v1/api-keys", { token: owner.token })
      expect(listed.status).toBe(200)
      expect(listed.body.map((k: any) => k.id).sort()).toEqual([key.id, test.id].sort())
      expect(listed.text).not.toContain(key.raw_key)
      expect(listed.text).not.toContain(test.raw_key)
      for (const item of listed.body) {
        expect(Object.keys(item).sort()).toEqual(
          ["created_at", "env", "expires_at", "id", "key_prefix", "last_used_at", "name", "status"]
        )
      }
    }))

  it.effect("a key works on the data plane and its last use is recorded", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = yield* createKey(owner.token)
      const before = yield* call("GET", "/v1/api-keys", { token: owner.token })
      expect(before.body[0].last_used_at).toBeNull()
      const spaces = yield* call("GET", "/v1/spaces", { token: key.raw_key })
      expect(spaces.status).toBe(200)
      const after = yield* call("GET", "/v1/api-keys", { token: owner.token })
      expect(Date.parse(after.body[0].last_used_at)).toBeGreaterThan(Date.now() - 60_000)
    }))

  it.effect("revoking is immediate, permanent and unlists the key", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = yield* createKey(owner.token)
      expect((yield* call("GET", "/v1/spaces", { token: key.raw_key })).status).toBe(200)
      const revoked = yield* call("DELETE", `/v1/api-keys/${key.id}`, { token: owner.token })
      expect(revoked.status).toBe(204)
      expect(revoked.text).toBe("")
      expect(revoked.headers["x-request-id"]).toBeDefined()
      expect401(yield* call("GET", "/v1/spaces", { token: key.raw_key }), "unauthorized")
      const listed = yield* call("GET", "/v1/api-keys", { token: owner.token })
      expect(listed.body.map((k: any) => k.id)).not.toContain(key.id)
      const again = yield* call("DELETE", `/v1/api-keys/${key.id}`, { token: owner.token })
      expect(again.status).toBe(404)
      expect(again.body.error.code).toBe("not_found")
    }))

  it.effect("every 401 code", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const other = yield* signup("other")
      const key = yield* createKey(owner.token)
      // missing key
      expect401(yield* call("GET", "/v1/spaces"), "unauthorized")
      // bad header format
      expect401(yield* call("GET", "/v1/spaces", { headers: { authorization: key.raw_key } }), "unauthorized")
      expect401(yield* call("GET", "/v1/spaces", { headers: { authorization: `Basic ${key.raw_key}` } }), "unauthorized")
      expect401(yield* call("GET", "/v1/spaces", { headers: { authorization: "Bearer" } }), "unauthorized")
      expect401(yield* call("GET", "/v1/spaces", { headers: { authorization: `Bearer ${key.raw_key} extra` } }), "unauthorized")
      // not a key at all, or a truncated one
      expect401(yield* call("GET", "/v1/spaces", { token: "hello" }), "unauthorized")
      expect401(yield* call("GET", "/v1/spaces", { token: key.raw_key.slice(0, -1) }), "unauthorized")
      // right id, wrong secret; right key under the other environment's prefix
      expect401(yield* call("GET", "/v1/spaces", { token: key.raw_key.slice(0, -4) + "AAAA" }), "unauthorized")
      expect401(yield* call("GET", "/v1/spaces", { token: key.raw_key.replace("svc_test_", "svc_live_") }), "unauthorized")
      // another organization's key (the request names an organization the key is not of)
      expect401(yield* call("GET", "/v1/spaces", { token: key.raw_key, headers: { "x-svc-org-id": other.orgId } }), "unauthorized")
      expect((yield* call("GET", "/v1/spaces", { token: key.raw_key, headers: { "x-svc-org-id": owner.orgId } })).status)
        .toBe(200)
      // well-formed but never issued
      expect401(yield* call("GET", "/v1/spaces", { token: `svc_live_${"Z".repeat(44)}` }), "invalid_api_key")
      expect401(yield* call("GET", "/v1/spaces", { token: `svc_test_${"a1".repeat(22)}` }), "invalid_api_key")
      // a session token that was never issued or was signed out
      expect401(yield* call("GET", "/v1/spaces", { token: `ses_${"Q".repeat(44)}` }), "unauthorized")
    }))

  it.effect("key management needs a session: an API key gets session_required", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = yield* createKey(owner.token)
      for (
        const [method, path, json] of [
          ["GET", "/v1/api-keys", undefined],
          ["POST", "/v1/api-keys", { name: "x", env: "test" }],
          ["DELETE", `/v1/api-keys/${key.id}`, undefined],
          ["GET", "/v1/orgs/me", undefined],
          ["GET", "/v1/orgs/me/members", undefined],
          ["POST", "/auth/logout", undefined]
        ] as const
      ) {
        const reply = yield* callRaw(method, path, { token: key.raw_key, ...(json ? { json } : {}) })
        expect(reply.status, `${method} ${path}`).toBe(401)
        expect(reply.body.error.code, `${method} ${path}`).toBe("session_required")
      }
      // and the key was not revoked by the refused DELETE
      expect((yield* call("GET", "/v1/spaces", { token: key.raw_key })).status).toBe(200)
    }))

  it.effect("members may list keys; only owners and admins create and revoke", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const member = yield* addMember(owner, "member")
      const admin = yield* addMember(owner, "admin")
      const key = yield* createKey(owner.token)
      expect((yield* call("GET", "/v1/api-keys", { token: member.token })).status).toBe(200)
      const refused = yield* call("POST", "/v1/api-keys", { token: member.token, json: { name: "m", env: "test" } })
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe("insufficient_role")
      const refusedRevoke = yield* call("DELETE", `/v1/api-keys/${key.id}`, { token: member.token })
      expect(refusedRevoke.body.error.code).toBe("insufficient_role")
      const adminKey = yield* createKey(admin.token)
      expect((yield* call("DELETE", `/v1/api-keys/${adminKey.id}`, { token: admin.token })).status).toBe(204)
      expect((yield* call("DELETE", `/v1/api-keys/${key.id}`, { token: admin.token })).status).toBe(204)
    }))

  it.effect("another organization's keys are invisible and cannot be revoked", () =>
    Effect.gen(function*() {
      const a = yield* signup("a")
      const b = yield* signup("b")
      const keyA = yield* createKey(a.token)
      const listB = yield* call("GET", "/v1/api-keys", { token: b.token })
      expect(listB.body).toEqual([])
      const revoke = yield* call("DELETE", `/v1/api-keys/${keyA.id}`, { token: b.token })
      expect(revoke.status).toBe(404)
      expect(revoke.body.error.code).toBe("not_found")
      expect((yield* call("GET", "/v1/spaces", { token: keyA.raw_key })).status).toBe(200)
    }))
})
