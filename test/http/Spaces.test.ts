import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

eachProfile("spaces", (it) => {
  it.effect("create with a chosen or generated id, get, list and delete, with a key or a session", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = yield* createKey(owner.token)
      const chosen = yield* call("POST", "/v1/spaces", {
        token: key.raw_key,
        json: { space_id: "support-bot", name: "Support bot", space_type: "agent", description: "tickets" }
      })
      expect(chosen.status).toBe(201)
      expect(chosen.body).toMatchObject({
        space_id: "support-bot",
        name: "Support bot",
        space_type: "agent",
        description: "tickets"
      })
      expect(Date.parse(chosen.body.created_at)).not.toBeNaN()

      const generated = yield* call("POST", "/v1/spaces", { token: owner.token, json: {} })
      expect(generated.status).toBe(201)
      expect(generated.body.space_id).toMatch(/^sp_[A-Za-z0-9]{16}$/)
      expect(generated.body.space_type).toBe("general")
      expect(generated.body.name).toBe(generated.body.space_id)

      const got = yield* call("GET", "/v1/spaces/support-bot", { token: key.raw_key })
      expect(got.body).toEqual(chosen.body)

      const list = yield* call("GET", "/v1/spaces", { token: key.raw_key })
      expect(list.body.total).toBe(2)
      expect(list.body.items.map((s: any) => s.space_id)).toEqual(["support-bot", generated.body.space_id])
      expect(list.body).toMatchObject({ limit: 100, offset: 0 })
      const agents = yield* call("GET", "/v1/spaces?space_type=agent", { token: key.raw_key })
      expect(agents.body.total).toBe(1)
      expect(agents.body.items.map((s: any) => s.space_id)).toEqual(["support-bot"])
      expect((yield* call("GET", "/v1/spaces?space_type=martian", { token: key.raw_key })).status).toBe(422)
      const page = yield* call("GET", "/v1/spaces?limit=1&offset=1", { token: key.raw_key })
      expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 1 })
      expect(page.body.items.map((s: any) => s.space_id)).toEqual([generated.body.space_id])

      const deleted = yield* call("DELETE", "/v1/spaces/support-bot", { token: key.raw_key })
      expect(deleted.status).toBe(204)
      const gone = yield* call("GET", "/v1/spaces/support-bot", { token: key.raw_key })
      expect(gone.status).toBe(404)
      expect(gone.body.error.code).toBe("not_found")
      expect((yield* call("DELETE", "/v1/spaces/support-bot", { token: key.raw_key })).status).toBe(404)
    }))

  it.effect("a duplicate space_id is 409 conflict; a malformed one 422", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: "dup" } })).status).toBe(201)
      const again = yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: "dup" } })
      expect(again.status).toBe(409)
      expect(again.body.error.code).toBe("conflict")
      for (const bad of ["", "-lead", "has space", "a/b", "x".repeat(129), "ünï"]) {
        const reply = yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: bad } })
        expect(reply.status, bad).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
    }))

  it.effect("the space types catalogue needs no key", () =>
    Effect.gen(function*() {
      const types = yield* call("GET", "/v1/space-types")
      expect(types.status).toBe(200)
      for (const t of types.body.items) expect(Object.keys(t).sort()).toEqual(["description", "name", "space_type"])
      const owner = yield* signup()
      for (const t of types.body.items) {
        const made = yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_type: t.space_type } })
        expect(made.body.space_type).toBe(t.space_type)
      }
    }))

  it.effect("deleting a space needs owner or admin", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const member = yield* addMember(owner, "member")
      const admin = yield* addMember(owner, "admin")
      const id = unique("roles")
      expect((yield* call("POST", "/v1/spaces", { token: member.token, json: { space_id: id } })).status).toBe(201)
      const refused = yield* call("DELETE", `/v1/spaces/${id}`, { token: member.token })
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe("insufficient_role")
      expect((yield* call("GET", `/v1/spaces/${id}`, { token: member.token })).status).toBe(200)
      expect((yield* call("DELETE", `/v1/spaces/${id}`, { token: admin.token })).status).toBe(204)
    }))

  it.effect("isolation: the same space_id in two organizations is two spaces; the other's is forbidden", () =>
    Effect.gen(function*() {
      const a = yield* signup("a")
      const b = yield* signup("b")
      const keyA = yield* createKey(a.token)
      const keyB = yield* createKey(b.token)
      const onlyA = unique("only-a")
      const shared = unique("shared")
      yield* call("POST", "/v1/spaces", { token: keyA.raw_key, json: { space_id: onlyA, name: "secret name" } })
      const sharedA = yield* call("POST", "/v1/spaces", { token: keyA.raw_key, json: { space_id: shared, name: "A" } })
      const sharedB = yield* call("POST", "/v1/spaces", { token: keyB.raw_key, json: { space_id: shared, name: "B" } })
      expect(sharedA.status).toBe(201)
      expect(sharedB.status).toBe(201)
      expect((yield* call("GET", `/v1/spaces/${shared}`, { token: keyA.raw_key })).body.name).toBe("A")
      expect((yield* call("GET", `/v1/spaces/${shared}`, { token: keyB.raw_key })).body.name).toBe("B")

      const listB = yield* call("GET", "/v1/spaces", { token: keyB.raw_key })
      expect(listB.body.items.map((s: any) => s.space_id)).toEqual([shared])
      expect(listB.text).not.toContain(onlyA)

      for (const [method, token] of [["GET", keyB.raw_key], ["DELETE", keyB.raw_key], ["GET", b.token], ["DELETE", b.token]] as const) {
        const reply = yield* call(method, `/v1/spaces/${onlyA}`, { token })
        expect(reply.status, method).toBe(403)
        expect(reply.body.error.code).toBe("forbidden")
        expect(reply.text).not.toContain("secret name")
      }
      // B deleting its own copy leaves A's untouched.
      expect((yield* call("DELETE", `/v1/spaces/${shared}`, { token: keyB.raw_key })).status).toBe(204)
      expect((yield* call("GET", `/v1/spaces/${shared}`, { token: keyA.raw_key })).status).toBe(200)
      expect((yield* call("GET", `/v1/spaces/${onlyA}`, { token: keyA.raw_key })).body.name).toBe("secret name")
    }))
})
