import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, call, callRaw, createKey, signup, uniqueEmail } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

eachProfile("accounts, sessions and organizations", (it) => {
  it.effect("signup creates a user, an organization and its owner; login and logout", () =>
    Effect.gen(function*() {
      const email = uniqueEmail("Mixed.Case")
      const signed = yield* call("POST", "/auth/signup", {
        json: { email: `  ${email.toUpperCase()} `, password: "a long password", org_name: "Acme Labs" }
      })
      expect(signed.status).toBe(201)
      expect(signed.body.session_token).toMatch(/^ses_[A-Za-z0-9]{44}$/)
      expect(signed.body.role).toBe("owner")
      const me = yield* call("GET", "/v1/orgs/me", { token: signed.body.session_token })
      expect(me.body).toMatchObject({
        org_id: signed.body.org_id,
        name: "Acme Labs",
        role: "owner",
        user_id: signed.body.user_id,
        email: email.toLowerCase()
      })

      const login = yield* call("POST", "/auth/login", { json: { email, password: "a long password" } })
      expect(login.status).toBe(200)
      expect(login.body.org_id).toBe(signed.body.org_id)
      expect(login.body.session_token).not.toBe(signed.body.session_token)

      const out = yield* call("POST", "/auth/logout", { token: login.body.session_token })
      expect(out.status).toBe(204)
      const after = yield* call("GET", "/v1/orgs/me", { token: login.body.session_token })
      expect(after.status).toBe(401)
      expect(after.body.error.code).toBe("unauthorized")
      // the other session is unaffected
      expect((yield* call("GET", "/v1/orgs/me", { token: signed.body.session_token })).status).toBe(200)
    }))

  it.effect("a taken email is 409 conflict; wrong credentials are 401 without telling which was wrong", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const dup = yield* call("POST", "/auth/signup", { json: { email: owner.email, password: "whatever123", org_name: "x" } })
      expect(dup.status).toBe(409)
      expect(dup.body.error.code).toBe("conflict")
      const wrongPassword = yield* call("POST", "/auth/login", { json: { email: owner.email, password: "nope nope" } })
      const unknownEmail = yield* call("POST", "/auth/login", { json: { email: uniqueEmail("ghost"), password: "nope nope" } })
      expect(wrongPassword.status).toBe(401)
      expect(unknownEmail.status).toBe(401)
      expect(wrongPassword.body.error.message).toBe(unknownEmail.body.error.message)
      const short = yield* call("POST", "/auth/signup", { json: { email: uniqueEmail(), password: "short", org_name: "x" } })
      expect(short.status).toBe(422)
    }))

  it.effect("members: owners and admins add them, login picks the organization, roles are enforced", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const admin = yield* addMember(owner, "admin")
      const member = yield* addMember(owner, "member")
      const members = yield* call("GET", "/v1/orgs/me/members", { token: member.token })
      expect(members.body.total).toBe(3)
      expect(members.body.items.map((m: any) => m.role).sort()).toEqual(["admin", "member", "owner"])
      expect((yield* call("GET", "/v1/orgs/me", { token: member.token })).body).toMatchObject({
        org_id: owner.orgId,
        role: "member"
      })

      const outsider = yield* signup("outsider")
      const byMember = yield* call("POST", "/v1/orgs/me/members", { token: member.token, json: { email: outsider.email } })
      expect(byMember.status).toBe(403)
      expect(byMember.body.error.code).toBe("insufficient_role")
      const ownerByAdmin = yield* call("POST", "/v1/orgs/me/members", {
        token: admin.token,
        json: { email: outsider.email, role: "owner" }
      })
      expect(ownerByAdmin.body.error.code).toBe("insufficient_role")
      const twice = yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: member.email } })
      expect(twice.status).toBe(409)
      // Adding invites: the answer is the same whether or not the email has an account, and nobody joins without accepting.
      const nobody = yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: uniqueEmail("none") } })
      const someone = yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: outsider.email } })
      for (const answer of [nobody, someone]) {
        expect(answer.status, answer.text).toBe(201)
        expect(Object.keys(answer.body).sort()).toEqual(
          ["answered_at", "created_at", "email", "expires_at", "id", "invite_url", "invited_by", "org_id", "org_name", "role", "status"]
        )
        expect(answer.body).toMatchObject({ status: "pending", role: "member", answered_at: null })
      }
      expect((yield* call("GET", "/v1/orgs/me/members", { token: owner.token })).body.total).toBe(3)

      const notMember = yield* call("POST", "/auth/login", {
        json: { email: outsider.email, password: outsider.password, org_id: owner.orgId }
      })
      expect(notMember.status).toBe(401)

      const removeOther = yield* call("DELETE", `/v1/orgs/me/members/${admin.userId}`, { token: member.token })
      expect(removeOther.body.error.code).toBe("insufficient_role")
      const lastOwner = yield* call("DELETE", `/v1/orgs/me/members/${owner.userId}`, { token: owner.token })
      expect(lastOwner.status).toBe(409)
      // A member may leave; their session in that organization stops at once.
      expect((yield* call("DELETE", `/v1/orgs/me/members/${member.userId}`, { token: member.token })).status).toBe(204)
      expect((yield* call("GET", "/v1/orgs/me", { token: member.token })).status).toBe(401)
    }))

  it.effect("a removed member's API keys stop at once; only an owner removes an owner", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const admin = yield* addMember(owner, "admin")
      // Members make no keys; an admin does, and leaves.
      const leaving = yield* addMember(owner, "admin")
      const secondOwner = yield* addMember(owner, "owner")
      const key = (yield* createKey(leaving.token)).raw_key
      expect((yield* call("GET", "/v1/spaces", { token: key })).status).toBe(200)
      // Used once more, so the node trusts it from memory: the removal must still reach it.
      expect((yield* call("POST", "/v1/record", { token: key, json: { space_id: "left", content: "Written before leaving." } })).status).toBe(200)
      expect((yield* call("DELETE", `/v1/orgs/me/members/${leaving.userId}`, { token: admin.token })).status).toBe(204)
      for (const [method, path, json] of [["GET", "/v1/spaces", undefined], ["POST", "/v1/record", { space_id: "left", content: "Written after." }]] as const) {
        const refused = yield* callRaw(method, path, { token: key, ...(json ? { json } : {}) })
        expect(refused.status, path).toBe(401)
        expect(refused.body.error.code).toBe("unauthorized")
      }
      // The owner's own keys are untouched.
      const ownerKey = (yield* createKey(owner.token)).raw_key
      expect((yield* call("GET", "/v1/spaces", { token: ownerKey })).status).toBe(200)

      const byAdmin = yield* call("DELETE", `/v1/orgs/me/members/${secondOwner.userId}`, { token: admin.token })
      expect(byAdmin.status).toBe(403)
      expect(byAdmin.body.error.code).toBe("insufficient_role")
      expect((yield* call("GET", "/v1/orgs/me/members", { token: owner.token })).body.total).toBe(3)
      expect((yield* call("DELETE", `/v1/orgs/me/members/${secondOwner.userId}`, { token: owner.token })).status).toBe(204)
      expect((yield* call("GET", "/v1/orgs/me/members", { token: owner.token })).body.total).toBe(2)
    }))

  it.effect("another organization's members and identity stay invisible", () =>
    Effect.gen(function*() {
      const a = yield* signup("a")
      const b = yield* signup("b")
      const bMembers = yield* call("GET", "/v1/orgs/me/members", { token: b.token })
      expect(bMembers.text).not.toContain(a.email)
      const removeA = yield* call("DELETE", `/v1/orgs/me/members/${a.userId}`, { token: b.token })
      expect(removeA.status).toBe(404)
      expect((yield* call("GET", "/v1/orgs/me", { token: a.token })).body.org_id).toBe(a.orgId)
      const keyA = yield* createKey(a.token)
      const withOtherOrg = yield* call("GET", "/v1/orgs/me", { token: a.token, headers: { "x-svc-org-id": b.orgId } })
      expect(withOtherOrg.status).toBe(401)
      expect(withOtherOrg.body.error.code).toBe("unauthorized")
      expect((yield* call("GET", "/v1/spaces", { token: keyA.raw_key, headers: { "x-svc-org-id": b.orgId } })).status)
        .toBe(401)
    }))
})
