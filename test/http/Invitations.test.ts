/**
 * Invitations by email and organization switching, over HTTP: owners and
 * admins invite (members and API keys may not), duplicates and existing
 * members are 409, withdrawing hides an invitation from its invitee, the
 * invitee accepts (the organization shows in GET /v1/orgs and the session
 * switches to it) or declines, and another user's, answered or expired
 * invitations are 404.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Account, addMember, call, callRaw, createKey, signup, uniqueEmail } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const DAY = 24 * 60 * 60 * 1000

const invite = (owner: Account, email: string, role: "admin" | "member" = "member") =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/v1/orgs/me/invitations", { token: owner.token, json: { email, role } })
    expect(reply.status, reply.text).toBe(201)
    return reply.body.id as string
  })

const ids = (reply: { body: { items: ReadonlyArray<{ id: string }> } }) => reply.body.items.map((item) => item.id)

/** A user signed up with the session's own expiry kept, to compare a switch against. */
const signupWithExpiry = (label: string) =>
  Effect.gen(function*() {
    const email = uniqueEmail(label)
    const password = "correct horse battery"
    const reply = yield* call("POST", "/auth/signup", { json: { email, password, org_name: `${label} org` } })
    expect(reply.status, reply.text).toBe(201)
    const account: Account = { token: reply.body.session_token, orgId: reply.body.org_id, userId: reply.body.user_id, email, password }
    return { account, expiresAt: reply.body.expires_at as string }
  })

eachProfile("invitations and organization switching", (it) => {
  it.effect("owners and admins invite; duplicates, members, API keys and bad input are refused", () =>
    Effect.gen(function*() {
      const owner = yield* signup("inviter")
      const email = uniqueEmail("Invitee")
      const created = yield* call("POST", "/v1/orgs/me/invitations", {
        token: owner.token,
        json: { email: `  ${email.toUpperCase()} `, role: "admin" }
      })
      expect(created.status, created.text).toBe(201)
      const id: string = created.body.id
      expect(id).toMatch(/^inv_[A-Za-z0-9]{16}$/)
      expect(created.body).toMatchObject({
        org_id: owner.orgId,
        org_name: "inviter org",
        email: email.toLowerCase(),
        role: "admin",
        status: "pending",
        invited_by: owner.userId,
        answered_at: null
      })
      const createdAt = Date.parse(created.body.created_at)
      expect(Math.abs(createdAt - Date.now())).toBeLessThan(60_000)
      expect(Date.parse(created.body.expires_at) - createdAt).toBe(7 * DAY)
      expect(created.body.invite_url).toMatch(new RegExp(`^http://[^/]+/v1/invitations/${id}$`))

      const listed = yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })
      expect(listed.status).toBe(200)
      expect(listed.body.total).toBe(1)
      expect(listed.body.items[0]).toEqual(created.body)

      const duplicate = yield* call("POST", "/v1/orgs/me/invitations", { token: owner.token, json: { email, role: "member" } })
      expect(duplicate.status).toBe(409)
      expect(duplicate.body.error.code).toBe("conflict")

      const admin = yield* addMember(owner, "admin")
      const byAdmin = yield* call("POST", "/v1/orgs/me/invitations", { token: admin.token, json: { email: uniqueEmail("second") } })
      expect(byAdmin.status, byAdmin.text).toBe(201)
      expect(byAdmin.body.role).toBe("member")
      expect(byAdmin.body.invited_by).toBe(admin.userId)
      expect(ids(yield* call("GET", "/v1/orgs/me/invitations", { token: admin.token }))).toEqual([id, byAdmin.body.id])

      const member = yield* addMember(owner, "member")
      for (
        const reply of [
          yield* call("POST", "/v1/orgs/me/invitations", { token: member.token, json: { email: uniqueEmail("nope") } }),
          yield* call("GET", "/v1/orgs/me/invitations", { token: member.token }),
          yield* call("DELETE", `/v1/orgs/me/invitations/${id}`, { token: member.token })
        ]
      ) {
        expect(reply.status).toBe(403)
        expect(reply.body.error.code).toBe("insufficient_role")
      }

      const key = (yield* createKey(owner.token)).raw_key
      for (
        const reply of [
          yield* call("POST", "/v1/orgs/me/invitations", { token: key, json: { email: uniqueEmail("bykey") } }),
          yield* call("GET", "/v1/orgs/me/invitations", { token: key }),
          yield* call("DELETE", `/v1/orgs/me/invitations/${id}`, { token: key }),
          yield* call("GET", "/v1/invitations", { token: key }),
          yield* call("POST", `/v1/invitations/${id}/accept`, { token: key }),
          yield* call("GET", "/v1/orgs", { token: key }),
          yield* call("POST", "/auth/switch", { token: key, json: { org_id: owner.orgId } })
        ]
      ) {
        expect(reply.status).toBe(401)
        expect(reply.body.error.code).toBe("session_required")
      }

      const existing = yield* call("POST", "/v1/orgs/me/invitations", {
        token: owner.token,
        json: { email: member.email.toUpperCase() }
      })
      expect(existing.status).toBe(409)
      expect(existing.body.error.code).toBe("conflict")

      for (
        const json of [
          { email, role: "owner" },
          { email: "not an email", role: "member" },
          { email: uniqueEmail("extra"), role: "member", note: "hi" },
          { email: 42 }
        ]
      ) {
        const bad = yield* call("POST", "/v1/orgs/me/invitations", { token: owner.token, offContract: json })
        expect(bad.status, JSON.stringify(json)).toBe(422)
        expect(bad.body.error.code).toBe("validation_error")
      }
      expect((yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })).body.total).toBe(2)
    }))

  it.effect("a withdrawn invitation is gone for the invitee and cannot be answered", () =>
    Effect.gen(function*() {
      const owner = yield* signup("withdrawer")
      const invitee = yield* signup("withdrawn")
      const id = yield* invite(owner, invitee.email)
      expect(ids(yield* call("GET", "/v1/invitations", { token: invitee.token }))).toEqual([id])

      const withdrawn = yield* call("DELETE", `/v1/orgs/me/invitations/${id}`, { token: owner.token })
      expect(withdrawn.status).toBe(204)
      const mine = yield* call("GET", "/v1/invitations", { token: invitee.token })
      expect(mine.body).toEqual({ items: [], total: 0 })
      const accept = yield* call("POST", `/v1/invitations/${id}/accept`, { token: invitee.token })
      expect(accept.status).toBe(404)
      expect(accept.body.error.code).toBe("not_found")
      const again = yield* call("DELETE", `/v1/orgs/me/invitations/${id}`, { token: owner.token })
      expect(again.status).toBe(404)
      expect(again.body.error.code).toBe("not_found")
      expect((yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })).body.total).toBe(0)
      // Another organization cannot withdraw it either.
      const otherId = yield* invite(owner, uniqueEmail("kept"))
      const stranger = yield* signup("stranger")
      expect((yield* call("DELETE", `/v1/orgs/me/invitations/${otherId}`, { token: stranger.token })).status).toBe(404)
      expect(ids(yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token }))).toEqual([otherId])
    }))

  it.effect("the invitee accepts: the organization shows in GET /v1/orgs and the session switches to it", () =>
    Effect.gen(function*() {
      const owner = yield* signup("acme")
      const { account: invitee, expiresAt } = yield* signupWithExpiry("joiner")
      const id = yield* invite(owner, invitee.email.toUpperCase(), "admin")

      const mine = yield* call("GET", "/v1/invitations", { token: invitee.token })
      expect(mine.status).toBe(200)
      expect(mine.body.total).toBe(1)
      expect(mine.body.items[0]).toMatchObject({ id, org_id: owner.orgId, org_name: "acme org", role: "admin", status: "pending" })
      expect((yield* call("GET", `/v1/invitations/${id}`, { token: invitee.token })).body).toMatchObject({ id, status: "pending" })

      const before = yield* call("GET", "/v1/orgs", { token: invitee.token })
      expect(before.body.total).toBe(1)
      expect(before.body.items[0]).toMatchObject({ org_id: invitee.orgId, role: "owner", current: true })
      const notYet = yield* call("POST", "/auth/switch", { token: invitee.token, json: { org_id: owner.orgId } })
      expect(notYet.status).toBe(404)
      expect(notYet.body.error.code).toBe("not_found")

      const accepted = yield* call("POST", `/v1/invitations/${id}/accept`, { token: invitee.token })
      expect(accepted.status, accepted.text).toBe(200)
      expect(accepted.body).toMatchObject({ id, org_id: owner.orgId, status: "accepted" })
      expect(Date.parse(accepted.body.answered_at)).not.toBeNaN()

      const orgs = yield* call("GET", "/v1/orgs", { token: invitee.token })
      expect(orgs.status).toBe(200)
      expect(orgs.body.total).toBe(2)
      expect(orgs.body.items).toEqual([
        expect.objectContaining({ org_id: invitee.orgId, name: "joiner org", role: "owner", current: true }),
        expect.objectContaining({ org_id: owner.orgId, name: "acme org", role: "admin", current: false })
      ])
      const members = yield* call("GET", "/v1/orgs/me/members", { token: owner.token })
      expect(members.body.items).toContainEqual(expect.objectContaining({ user_id: invitee.userId, role: "admin" }))

      const switched = yield* call("POST", "/auth/switch", { token: invitee.token, json: { org_id: owner.orgId } })
      expect(switched.status, switched.text).toBe(200)
      expect(switched.body).toMatchObject({ user_id: invitee.userId, org_id: owner.orgId, role: "admin", expires_at: expiresAt })
      expect(switched.body.session_token).toMatch(/^ses_[A-Za-z0-9]{44}$/)
      expect(switched.body.session_token).not.toBe(invitee.token)
      const me = yield* call("GET", "/v1/orgs/me", { token: switched.body.session_token })
      expect(me.body).toMatchObject({ org_id: owner.orgId, name: "acme org", role: "admin", user_id: invitee.userId })
      const current = yield* call("GET", "/v1/orgs", { token: switched.body.session_token })
      expect(current.body.items.filter((org: { current: boolean }) => org.current).map((org: { org_id: string }) => org.org_id))
        .toEqual([owner.orgId])
      // The switch moved the sign-in: the old token stops.
      const old = yield* call("GET", "/v1/orgs/me", { token: invitee.token })
      expect(old.status).toBe(401)
      expect(old.body.error.code).toBe("unauthorized")
      // As an admin of the new organization the invitee manages its invitations.
      expect((yield* call("GET", "/v1/orgs/me/invitations", { token: switched.body.session_token })).status).toBe(200)

      for (const action of ["accept", "decline"]) {
        const answered = yield* callRaw("POST", `/v1/invitations/${id}/${action}`, { token: switched.body.session_token })
        expect(answered.status).toBe(404)
        expect(answered.body.error.code).toBe("not_found")
      }
      expect((yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })).body.total).toBe(0)

      const back = yield* call("POST", "/auth/switch", { token: switched.body.session_token, json: { org_id: invitee.orgId } })
      expect(back.status).toBe(200)
      expect((yield* call("GET", "/v1/orgs/me", { token: back.body.session_token })).body).toMatchObject({
        org_id: invitee.orgId,
        role: "owner"
      })
      const nowhere = yield* call("POST", "/auth/switch", { token: back.body.session_token, json: { org_id: "org_doesnotexist" } })
      expect(nowhere.status).toBe(404)
      expect(nowhere.body.error.code).toBe("not_found")
    }))

  it.effect("declining; another user's, answered and expired invitations are 404 not_found", () =>
    Effect.gen(function*() {
      const owner = yield* signup("decliner-org")
      const invitee = yield* signup("decliner")
      const other = yield* signup("other")
      const id = yield* invite(owner, invitee.email)

      expect((yield* call("GET", "/v1/invitations", { token: other.token })).body.total).toBe(0)
      for (
        const reply of [
          yield* call("GET", `/v1/invitations/${id}`, { token: other.token }),
          yield* call("POST", `/v1/invitations/${id}/accept`, { token: other.token }),
          yield* call("POST", `/v1/invitations/${id}/decline`, { token: other.token })
        ]
      ) {
        expect(reply.status).toBe(404)
        expect(reply.body.error.code).toBe("not_found")
      }

      const declined = yield* call("POST", `/v1/invitations/${id}/decline`, { token: invitee.token })
      expect(declined.status, declined.text).toBe(200)
      expect(declined.body).toMatchObject({ id, status: "declined" })
      const orgs = yield* call("GET", "/v1/orgs", { token: invitee.token })
      expect(orgs.body.items.map((org: { org_id: string }) => org.org_id)).toEqual([invitee.orgId])
      const late = yield* call("POST", `/v1/invitations/${id}/accept`, { token: invitee.token })
      expect(late.status).toBe(404)
      expect(late.body.error.code).toBe("not_found")
      expect((yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })).body.total).toBe(0)

      // A declined invitation does not block a new one; an expired one is neither listed nor answerable.
      const second = yield* invite(owner, invitee.email)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE invitations SET expires_at = now() - interval '1 minute' WHERE id = ${second}`
      expect((yield* call("GET", "/v1/invitations", { token: invitee.token })).body.total).toBe(0)
      expect((yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })).body.total).toBe(0)
      for (const action of ["accept", "decline"]) {
        const expired = yield* callRaw("POST", `/v1/invitations/${second}/${action}`, { token: invitee.token })
        expect(expired.status).toBe(404)
        expect(expired.body.error.code).toBe("not_found")
      }
      expect((yield* call("DELETE", `/v1/orgs/me/invitations/${second}`, { token: owner.token })).status).toBe(404)
      // The expired one no longer holds the email's single pending slot.
      const third = yield* invite(owner, invitee.email)
      expect(ids(yield* call("GET", "/v1/invitations", { token: invitee.token }))).toEqual([third])
    }))

  it.effect("adding a member is an invitation: nobody joins before accepting; only an owner invites an owner", () =>
    Effect.gen(function*() {
      const owner = yield* signup("direct-org")
      const invitee = yield* signup("direct")
      const added = yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: invitee.email, role: "admin" } })
      expect(added.status, added.text).toBe(201)
      expect(added.body).toMatchObject({ org_id: owner.orgId, email: invitee.email, role: "admin", status: "pending" })
      // Not a member yet: the invitation waits for them.
      expect((yield* call("GET", "/v1/orgs", { token: invitee.token })).body.total).toBe(1)
      expect(ids(yield* call("GET", "/v1/invitations", { token: invitee.token }))).toEqual([added.body.id])
      expect((yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: invitee.email } })).status).toBe(409)
      const accepted = yield* call("POST", `/v1/invitations/${added.body.id}/accept`, { token: invitee.token })
      expect(accepted.status).toBe(200)
      expect(accepted.body.status).toBe("accepted")
      const orgs = yield* call("GET", "/v1/orgs", { token: invitee.token })
      expect(orgs.body.items).toContainEqual(expect.objectContaining({ org_id: owner.orgId, role: "admin" }))
      expect(orgs.body.total).toBe(2)

      // The admin may invite members, not owners; an owner may invite an owner, who joins as one on accepting.
      const login = yield* call("POST", "/auth/login", { json: { email: invitee.email, password: invitee.password, org_id: owner.orgId } })
      const asAdmin = login.body.session_token as string
      const next = yield* signup("next-owner")
      const refused = yield* call("POST", "/v1/orgs/me/members", { token: asAdmin, json: { email: next.email, role: "owner" } })
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe("insufficient_role")
      const ownerInvite = yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: next.email, role: "owner" } })
      expect(ownerInvite.status, ownerInvite.text).toBe(201)
      expect((yield* call("POST", `/v1/invitations/${ownerInvite.body.id}/accept`, { token: next.token })).status).toBe(200)
      const members = yield* call("GET", "/v1/orgs/me/members", { token: owner.token })
      expect(members.body.items).toContainEqual(expect.objectContaining({ email: next.email, role: "owner" }))
    }))
})

eachProfile("invitation links under PUBLIC_URL", (it) => {
  it.effect("the link is built from PUBLIC_URL when it is set", () =>
    Effect.gen(function*() {
      const owner = yield* signup("linker")
      const created = yield* call("POST", "/v1/orgs/me/invitations", { token: owner.token, json: { email: uniqueEmail("linked") } })
      expect(created.status).toBe(201)
      expect(created.body.invite_url).toBe(`https://engram.example.com/v1/invitations/${created.body.id}`)
      const listed = yield* call("GET", "/v1/orgs/me/invitations", { token: owner.token })
      expect(listed.body.items[0].invite_url).toBe(created.body.invite_url)
    }))
}, { publicUrl: Option.some("https://engram.example.com") })
