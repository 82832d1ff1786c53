import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

eachProfile("projects", (it) => {
  it.effect("create, list, get, rename and delete projects; names are unique in an organization", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const created = yield* call("POST", "/v1/projects", { token: owner.token, json: { name: "  Support  " } })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ name: "Support", space_count: 0 })
      expect(created.body.id).toMatch(/^prj_[A-Za-z0-9]{16}$/)
      expect(Date.parse(created.body.created_at)).not.toBeNaN()
      const id = created.body.id as string

      const duplicate = yield* call("POST", "/v1/projects", { token: owner.token, json: { name: "Support" } })
      expect(duplicate.status).toBe(409)
      expect(duplicate.body.error.code).toBe("conflict")
      for (const name of ["", "   ", "x".repeat(101)]) {
        const bad = yield* call("POST", "/v1/projects", { token: owner.token, json: { name } })
        expect(bad.status).toBe(422)
        expect(bad.body.error.code).toBe("validation_error")
      }
      expect((yield* call("POST", "/v1/projects", { token: owner.token, json: { name: "x".repeat(100) } })).status).toBe(201)
      expect((yield* call("POST", "/v1/projects", { token: owner.token, offContract: { name: "Sales", extra: 1 } })).status).toBe(422)

      // Another organization may use the same name, and never sees ours.
      const stranger = yield* signup("stranger")
      expect((yield* call("POST", "/v1/projects", { token: stranger.token, json: { name: "Support" } })).status).toBe(201)
      const strangers = yield* call("GET", "/v1/projects", { token: stranger.token })
      expect(strangers.body.items.map((p: any) => p.name)).toEqual(["Support"])
      expect((yield* call("GET", `/v1/projects/${id}`, { token: stranger.token })).status).toBe(404)

      const list = yield* call("GET", "/v1/projects", { token: owner.token })
      expect(list.body).toMatchObject({ total: 2, limit: 100, offset: 0 })
      expect(list.body.items[0]).toEqual(created.body)
      const page = yield* call("GET", "/v1/projects?limit=1&offset=1", { token: owner.token })
      expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 1 })
      expect(page.body.items).toHaveLength(1)

      const renamed = yield* call("PATCH", `/v1/projects/${id}`, { token: owner.token, json: { name: "Customer support" } })
      expect(renamed.status).toBe(200)
      expect(renamed.body).toMatchObject({ id, name: "Customer support", created_at: created.body.created_at })
      expect((yield* call("GET", `/v1/projects/${id}`, { token: owner.token })).body.name).toBe("Customer support")
      const clash = yield* call("PATCH", `/v1/projects/${id}`, { token: owner.token, json: { name: "x".repeat(100) } })
      expect(clash.status).toBe(409)

      expect((yield* call("DELETE", `/v1/projects/${id}`, { token: owner.token })).status).toBe(204)
      const gone = yield* call("GET", `/v1/projects/${id}`, { token: owner.token })
      expect(gone.status).toBe(404)
      expect(gone.body.error.code).toBe("not_found")
      expect((yield* call("DELETE", `/v1/projects/${id}`, { token: owner.token })).status).toBe(404)
      expect((yield* call("PATCH", `/v1/projects/${id}`, { token: owner.token, json: { name: "Back" } })).status).toBe(404)
    }))

  it.effect("projects need a session; members read them, owners and admins change them", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = yield* createKey(owner.token)
      for (const [method, path] of [["GET", "/v1/projects"], ["POST", "/v1/projects"], ["GET", "/v1/projects/prj_x"]] as const) {
        const denied = yield* callRaw(method, path, { token: key.raw_key, json: method === "POST" ? { name: "Via key" } : undefined })
        expect(denied.status).toBe(401)
        expect(denied.body.error.code).toBe("session_required")
      }
      const project = (yield* call("POST", "/v1/projects", { token: owner.token, json: { name: "Shared" } })).body
      const member = yield* addMember(owner, "member")
      const admin = yield* addMember(owner, "admin")
      expect((yield* call("GET", "/v1/projects", { token: member.token })).body.total).toBe(1)
      expect((yield* call("GET", `/v1/projects/${project.id}`, { token: member.token })).status).toBe(200)
      for (const attempt of [
        call("POST", "/v1/projects", { token: member.token, json: { name: "Mine" } }),
        call("PATCH", `/v1/projects/${project.id}`, { token: member.token, json: { name: "Mine" } }),
        call("DELETE", `/v1/projects/${project.id}`, { token: member.token })
      ]) {
        const refused = yield* attempt
        expect(refused.status).toBe(403)
        expect(refused.body.error.code).toBe("insufficient_role")
      }
      expect((yield* call("PATCH", `/v1/projects/${project.id}`, { token: admin.token, json: { name: "Renamed" } })).status).toBe(200)
      expect((yield* call("DELETE", `/v1/projects/${project.id}`, { token: admin.token })).status).toBe(204)
    }))

  it.effect("spaces belong to a project: created into it with a key or a session, filtered by it, and a project holding spaces stays", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = yield* createKey(owner.token)
      const project = (yield* call("POST", "/v1/projects", { token: owner.token, json: { name: "Bots" } })).body
      const other = (yield* call("POST", "/v1/projects", { token: owner.token, json: { name: "Other" } })).body

      const inProject = yield* call("POST", "/v1/spaces", { token: key.raw_key, json: { space_id: "bot-a", project_id: project.id } })
      expect(inProject.status).toBe(201)
      expect(inProject.body.project_id).toBe(project.id)
      const viaSession = yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: "bot-b", project_id: project.id } })
      expect(viaSession.body.project_id).toBe(project.id)
      const loose = yield* call("POST", "/v1/spaces", { token: key.raw_key, json: { space_id: "loose" } })
      expect(loose.body.project_id).toBeNull()
      expect((yield* call("GET", "/v1/spaces/bot-a", { token: key.raw_key })).body.project_id).toBe(project.id)

      const unknown = yield* call("POST", "/v1/spaces", { token: key.raw_key, json: { space_id: "bot-c", project_id: "prj_nothere" } })
      expect(unknown.status).toBe(404)
      expect(unknown.body.error.code).toBe("not_found")
      expect((yield* call("GET", "/v1/spaces/bot-c", { token: key.raw_key })).status).toBe(404)
      // Another organization's project is not ours to put a space in.
      const stranger = yield* signup("stranger")
      const theirs = (yield* call("POST", "/v1/projects", { token: stranger.token, json: { name: "Theirs" } })).body
      expect((yield* call("POST", "/v1/spaces", { token: key.raw_key, json: { space_id: "bot-d", project_id: theirs.id } })).status).toBe(404)

      const filtered = yield* call("GET", `/v1/spaces?project_id=${project.id}`, { token: key.raw_key })
      expect(filtered.body.total).toBe(2)
      expect(filtered.body.items.map((s: any) => s.space_id)).toEqual(["bot-a", "bot-b"])
      expect((yield* call("GET", `/v1/spaces?project_id=${other.id}`, { token: key.raw_key })).body.total).toBe(0)
      expect((yield* call("GET", "/v1/spaces", { token: key.raw_key })).body.total).toBe(3)
      expect((yield* call("GET", `/v1/projects/${project.id}`, { token: owner.token })).body.space_count).toBe(2)

      const held = yield* call("DELETE", `/v1/projects/${project.id}`, { token: owner.token })
      expect(held.status).toBe(409)
      expect(held.body.error.code).toBe("conflict")
      expect((yield* call("DELETE", "/v1/spaces/bot-a", { token: owner.token })).status).toBe(204)
      expect((yield* call("DELETE", "/v1/spaces/bot-b", { token: owner.token })).status).toBe(204)
      expect((yield* call("GET", `/v1/projects/${project.id}`, { token: owner.token })).body.space_count).toBe(0)
      expect((yield* call("DELETE", `/v1/projects/${project.id}`, { token: owner.token })).status).toBe(204)
    }))
})
