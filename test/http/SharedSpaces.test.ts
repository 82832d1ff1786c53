/**
 * A space shared with another organization, over HTTP: the owning
 * organization's owners and admins manage its members (sessions only), a
 * member's keys list, retrieve and (with write access) record in it, read
 * access makes writes 403, an owner without an active key makes the space
 * 403 `space_unavailable` until it creates one, removing a member revokes at
 * once, and nothing of the shared space leaks into the member's own spaces.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { type Account, addMember, call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const record = (key: string, spaceId: string, content: string) =>
  call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content } })

const recalledIds = (key: string, spaceId: string, query: string) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query, limit: 20 } })
    expect(reply.status, reply.text).toBe(200)
    return (reply.body.results as ReadonlyArray<{ memory_id: string; content: string }>)
  })

const share = (owner: Account, spaceId: string, orgId: string, access: "read" | "write") =>
  Effect.gen(function*() {
    const reply = yield* call("POST", `/v1/spaces/${spaceId}/members`, { token: owner.token, json: { org_id: orgId, access } })
    expect(reply.status, reply.text).toBe(201)
    return reply.body
  })

eachProfile("shared spaces", (it) => {
  it.effect("the owning organization manages members: roles, sessions only, bad input", () =>
    Effect.gen(function*() {
      const owner = yield* signup("sharer")
      const partner = yield* signup("partner")
      const ownerKey = (yield* createKey(owner.token)).raw_key
      const spaceId = `shared-admin-${Date.now()}`
      expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: spaceId } })).status).toBe(201)

      const before = yield* call("GET", `/v1/spaces/${spaceId}/members`, { token: owner.token })
      expect(before.status, before.text).toBe(200)
      expect(before.body.total).toBe(1)
      expect(before.body.items[0]).toMatchObject({ org_id: owner.orgId, name: "sharer org", role: "owner", access: "write" })

      const added = yield* share(owner, spaceId, partner.orgId, "read")
      expect(added).toMatchObject({ org_id: partner.orgId, name: "partner org", role: "member", access: "read" })
      expect(Math.abs(Date.parse(added.added_at) - Date.now())).toBeLessThan(60_000)
      // Adding again sets the access; it stays one member.
      const upgraded = yield* share(owner, spaceId, partner.orgId, "write")
      expect(upgraded.access).toBe("write")
      expect(upgraded.added_at).toBe(added.added_at)
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/members`, { token: owner.token })
      expect(listed.body.items.map((m: { org_id: string; access: string }) => [m.org_id, m.access])).toEqual([
        [owner.orgId, "write"],
        [partner.orgId, "write"]
      ])

      // Keys may not manage members; members of the organization may look but not change.
      const byKey = yield* call("POST", `/v1/spaces/${spaceId}/members`, { token: ownerKey, json: { org_id: partner.orgId, access: "read" } })
      expect(byKey.status).toBe(401)
      expect(byKey.body.error.code).toBe("session_required")
      expect((yield* call("GET", `/v1/spaces/${spaceId}/members`, { token: ownerKey })).body.error.code).toBe("session_required")
      const member = yield* addMember(owner, "member")
      expect((yield* call("GET", `/v1/spaces/${spaceId}/members`, { token: member.token })).status).toBe(200)
      const byMember = yield* call("DELETE", `/v1/spaces/${spaceId}/members/${partner.orgId}`, { token: member.token })
      expect(byMember.status).toBe(403)
      expect(byMember.body.error.code).toBe("insufficient_role")
      const admin = yield* addMember(owner, "admin")

      // Bad input: unknown organization, the owner itself, a bad access, unknown fields, another org's space.
      const unknownOrg = yield* call("POST", `/v1/spaces/${spaceId}/members`, { token: admin.token, json: { org_id: "org_nobody", access: "read" } })
      expect(unknownOrg.status).toBe(404)
      expect(unknownOrg.body.error.code).toBe("not_found")
      const self = yield* call("POST", `/v1/spaces/${spaceId}/members`, { token: admin.token, json: { org_id: owner.orgId, access: "read" } })
      expect(self.status).toBe(422)
      expect(self.body.error.code).toBe("validation_error")
      const badAccess = yield* call("POST", `/v1/spaces/${spaceId}/members`, { token: admin.token, offContract: { org_id: partner.orgId, access: "admin" } })
      expect(badAccess.status).toBe(422)
      const extra = yield* call("POST", `/v1/spaces/${spaceId}/members`, {
        token: admin.token,
        offContract: { org_id: partner.orgId, access: "read", role: "owner" }
      })
      expect(extra.status).toBe(422)
      const theirs = yield* call("GET", `/v1/spaces/${spaceId}/members`, { token: partner.token })
      expect(theirs.status).toBe(403)
      expect(theirs.body.error.code).toBe("forbidden")
      expect((yield* call("GET", `/v1/spaces/nothing-${Date.now()}/members`, { token: owner.token })).status).toBe(404)

      const removed = yield* call("DELETE", `/v1/spaces/${spaceId}/members/${partner.orgId}`, { token: admin.token })
      expect(removed.status, removed.text).toBe(204)
      const again = yield* call("DELETE", `/v1/spaces/${spaceId}/members/${partner.orgId}`, { token: admin.token })
      expect(again.status).toBe(404)
      expect(again.body.error.code).toBe("not_found")
      expect((yield* call("GET", `/v1/spaces/${spaceId}/members`, { token: owner.token })).body.total).toBe(1)
    }))

  it.effect("a member organization's key lists, retrieves and records with write access; read access refuses writes", () =>
    Effect.gen(function*() {
      const owner = yield* signup("owner-org")
      const partner = yield* signup("member-org")
      const ownerKey = (yield* createKey(owner.token)).raw_key
      const partnerKey = (yield* createKey(partner.token)).raw_key
      const spaceId = `shared-${Date.now()}`
      const own = yield* record(ownerKey, spaceId, "Quentin keeps the spare keys of the Oslo office in the blue drawer.")
      expect(own.status, own.text).toBe(200)
      const ownId: string = own.body.memories[0].memory_id
      const partnerOwnSpace = `partner-own-${Date.now()}`
      expect((yield* record(partnerKey, partnerOwnSpace, "Quentin prefers tea to coffee in the mornings.")).status).toBe(200)

      // Before sharing: the id belongs to another organization.
      const refused = yield* call("POST", "/v1/retrieve", { token: partnerKey, json: { space_id: spaceId, query: "spare keys" } })
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe("forbidden")

      yield* share(owner, spaceId, partner.orgId, "read")
      const found = yield* recalledIds(partnerKey, spaceId, "Where are the spare keys of the Oslo office?")
      expect(found.map((r) => r.memory_id)).toContain(ownId)
      const list = yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: partnerKey })
      expect(list.status, list.text).toBe(200)
      expect(list.body.items.map((m: { id: string }) => m.id)).toContain(ownId)
      const history = yield* call("GET", `/v1/spaces/${spaceId}/memories/${ownId}/history`, { token: partnerKey })
      expect(history.status, history.text).toBe(200)
      const space = yield* call("GET", `/v1/spaces/${spaceId}`, { token: partnerKey })
      expect(space.status, space.text).toBe(200)
      expect(space.body).toMatchObject({ space_id: spaceId, shared: true, project_id: null })
      const spaces = yield* call("GET", "/v1/spaces?limit=100", { token: partnerKey })
      const byId = new Map((spaces.body.items as ReadonlyArray<{ space_id: string; shared: boolean }>).map((s) => [s.space_id, s.shared]))
      expect(byId.get(spaceId)).toBe(true)
      expect(byId.get(partnerOwnSpace)).toBe(false)
      expect(spaces.body.total).toBe(2)
      // The owner sees its own space as its own, not shared.
      const ownerSpaces = yield* call("GET", "/v1/spaces", { token: ownerKey })
      expect(ownerSpaces.body.items.map((s: { space_id: string; shared: boolean }) => [s.space_id, s.shared])).toEqual([[spaceId, false]])

      // Read access: every write is 403 forbidden, and nothing is stored.
      const write = yield* record(partnerKey, spaceId, "Quentin moved the keys to the red cabinet.")
      expect(write.status).toBe(403)
      expect(write.body.error.code).toBe("forbidden")
      const batch = yield* call("POST", "/v1/record/batch", { token: partnerKey, json: { space_id: spaceId, items: [{ content: "x y z" }] } })
      expect(batch.status).toBe(403)
      const edit = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${ownId}`, { token: partnerKey, json: { tags: ["mine"] } })
      expect(edit.status).toBe(403)
      const forget = yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${ownId}`, { token: partnerKey })
      expect(forget.status).toBe(403)
      // Managing the space stays the owner's: the member cannot delete it or read its rules.
      expect((yield* call("DELETE", `/v1/spaces/${spaceId}`, { token: partner.token })).status).toBe(403)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/rules`, { token: partner.token })).status).toBe(403)

      // Write access: records land in the owner's space, under the owner's rules.
      yield* share(owner, spaceId, partner.orgId, "write")
      const written = yield* record(partnerKey, spaceId, "Quentin moved the spare keys to the red cabinet, key sk-proj-abcdefghijklmnopqrstuvwxyz012345.")
      expect(written.status, written.text).toBe(200)
      const writtenId: string = written.body.memories[0].memory_id
      expect(JSON.stringify(written.body)).not.toContain("sk-proj-abcdefghijklmnopqrstuvwxyz012345")
      const seenByOwner = yield* recalledIds(ownerKey, spaceId, "red cabinet spare keys")
      expect(seenByOwner.map((r) => r.memory_id)).toContain(writtenId)
      const queued = yield* call("POST", "/v1/record/batch", {
        token: partnerKey,
        json: { space_id: spaceId, items: [{ content: "Quentin lent the van to Ines on Friday." }] }
      })
      expect(queued.status, queued.text).toBe(202)
      const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${queued.body.job_id}`, { token: partnerKey })
      expect(job.status, job.text).toBe(200)
      const edited = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${writtenId}`, { token: partnerKey, json: { tags: ["moved"] } })
      expect(edited.status, edited.text).toBe(200)
      expect(edited.body.tags).toEqual(["moved"])

      // Isolation: the member's own space never sees the shared memories, nor the owner the member's.
      const partnerOwn = yield* recalledIds(partnerKey, partnerOwnSpace, "spare keys red cabinet Oslo office")
      expect(partnerOwn.map((r) => r.memory_id)).not.toContain(ownId)
      expect(partnerOwn.map((r) => r.memory_id)).not.toContain(writtenId)
      expect((yield* call("POST", "/v1/retrieve", { token: ownerKey, json: { space_id: partnerOwnSpace, query: "tea" } })).status).toBe(403)
    }))

  it.effect("an owner with no active key makes the space unavailable until it creates one; removal revokes at once", () =>
    Effect.gen(function*() {
      const owner = yield* signup("keyless-owner")
      const partner = yield* signup("keyless-member")
      const ownerKey = yield* createKey(owner.token)
      const partnerKey = (yield* createKey(partner.token)).raw_key
      const spaceId = `keyless-${Date.now()}`
      expect((yield* record(ownerKey.raw_key, spaceId, "Ines waters the office ferns on Mondays.")).status).toBe(200)
      yield* share(owner, spaceId, partner.orgId, "write")
      expect((yield* call("POST", "/v1/retrieve", { token: partnerKey, json: { space_id: spaceId, query: "ferns" } })).status).toBe(200)

      expect((yield* call("DELETE", `/v1/api-keys/${ownerKey.id}`, { token: owner.token })).status).toBe(204)
      for (const reply of [
        yield* call("POST", "/v1/retrieve", { token: partnerKey, json: { space_id: spaceId, query: "ferns" } }),
        yield* record(partnerKey, spaceId, "Ines also waters the cactus."),
        yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: partnerKey }),
        yield* call("GET", `/v1/spaces/${spaceId}`, { token: partnerKey })
      ]) {
        expect(reply.status, reply.text).toBe(403)
        expect(reply.body.error.code).toBe("space_unavailable")
      }
      // The owner creates a key again: the share works again.
      yield* createKey(owner.token)
      expect((yield* call("POST", "/v1/retrieve", { token: partnerKey, json: { space_id: spaceId, query: "ferns" } })).status).toBe(200)

      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/members/${partner.orgId}`, { token: owner.token })).status).toBe(204)
      const after = yield* call("POST", "/v1/retrieve", { token: partnerKey, json: { space_id: spaceId, query: "ferns" } })
      expect(after.status).toBe(403)
      expect(after.body.error.code).toBe("forbidden")
      const listed = yield* call("GET", "/v1/spaces", { token: partnerKey })
      expect(listed.body.items.map((s: { space_id: string }) => s.space_id)).not.toContain(spaceId)
    }))
})
