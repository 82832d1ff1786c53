import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfileWithFakeModel, FakeModel, USAGE } from "../support/FakeModel.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
const LOCAL = "engram/local-extractive-1"
const ECHO = "acme/echo-large-2"

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("reason")
  const created = yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId, name: "Support Bot" } })
  expect(created.status, created.text).toBe(201)
  const put = (content: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } }).pipe(
      Effect.tap((r) => expect(r.status, r.text).toBe(200))
    )
  const reason = (body: Record<string, unknown>, token = key) =>
    call("POST", "/v1/reason", { token, offContract: { space_id: spaceId, ...body } })
  const profile = `/v1/spaces/${spaceId}/profile` as const
  const settings = `/v1/spaces/${spaceId}/reason-settings` as const
  /** The fake model's calls made while `effect` runs. */
  const callsDuring = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const fake = yield* FakeModel
      const before = fake.calls.length
      const result = yield* effect
      return { result, calls: fake.calls.slice(before), before }
    })
  return { owner, key, spaceId, put, reason, profile, settings, callsDuring }
})

const numberedLines = (system: string) => system.split("\n").filter((line) => /^\d+\. /.test(line))

eachProfileWithFakeModel("space profile", (it) => {
  it.effect("defaults, then an owner's PUT replaces the whole profile and DELETE resets it, idempotently", () =>
    Effect.gen(function*() {
      const { key, owner, profile, spaceId } = yield* setup
      const fresh = yield* call("GET", profile, { token: key })
      expect(fresh.status).toBe(200)
      expect(fresh.body).toEqual({
        space_id: spaceId,
        name: "Support Bot",
        mission: "",
        disposition: { skepticism: 3, literalism: 3, empathy: 3 }
      })

      const full = { mission: "Resolve billing tickets kindly.", disposition: { skepticism: 5, literalism: 1, empathy: 4 } }
      const stored = yield* call("PUT", profile, { token: key, json: full })
      expect(stored.status, stored.text).toBe(200)
      expect(stored.body).toEqual({ space_id: spaceId, name: "Support Bot", ...full })
      expect((yield* call("GET", profile, { token: owner.token })).body).toEqual(stored.body)

      // PUT replaces: what is omitted returns to its default.
      const partial = yield* call("PUT", profile, { token: key, json: { disposition: { empathy: 1 } } })
      expect(partial.body).toMatchObject({ mission: "", disposition: { skepticism: 3, literalism: 3, empathy: 1 } })
      expect((yield* call("PUT", profile, { token: key, json: {} })).body)
        .toMatchObject({ mission: "", disposition: { skepticism: 3, literalism: 3, empathy: 3 } })

      yield* call("PUT", profile, { token: key, json: full })
      const reset = yield* call("DELETE", profile, { token: key })
      expect(reset.status).toBe(204)
      expect(reset.text).toBe("")
      expect((yield* call("GET", profile, { token: key })).body).toEqual(fresh.body)
      expect((yield* call("DELETE", profile, { token: key })).status).toBe(204)
    }))

  it.effect("only an owner writes it: admins, members and keys acting as them get 403 insufficient_role; anyone reads", () =>
    Effect.gen(function*() {
      const { key, owner, profile } = yield* setup
      const admin = yield* addMember(owner, "admin")
      const member = yield* addMember(owner, "member")
      const adminKey = (yield* createKey(admin.token)).raw_key
      // A key acts with its creator's current role; once the admin who made it leaves, it is revoked (docs/api.md).
      const leaver = yield* addMember(owner, "admin")
      const leaverKey = (yield* createKey(leaver.token)).raw_key
      expect((yield* call("DELETE", `/v1/orgs/me/members/${leaver.userId}`, { token: leaver.token })).status).toBe(204)
      const departed = yield* call("PUT", profile, { token: leaverKey, json: { mission: "taken over" } })
      expect(departed.status).toBe(401)

      yield* call("PUT", profile, { token: key, json: { mission: "kept" } })
      for (const token of [admin.token, adminKey, member.token]) {
        const put = yield* call("PUT", profile, { token, json: { mission: "taken over" } })
        expect(put.status).toBe(403)
        expect(put.body.error.code).toBe("insufficient_role")
        const reset = yield* call("DELETE", profile, { token })
        expect(reset.status).toBe(403)
        expect(reset.body.error.code).toBe("insufficient_role")
        const read = yield* call("GET", profile, { token })
        expect(read.status).toBe(200)
        expect(read.body.mission).toBe("kept")
      }
      expect((yield* call("PUT", profile, { token: owner.token, json: { mission: "by session" } })).status).toBe(200)
    }))

  it.effect("the body is strict: unknown fields, out-of-range and non-integer traits are 422", () =>
    Effect.gen(function*() {
      const { key, profile } = yield* setup
      const bad = [
        { tone: "dry" },
        { name: "renamed" },
        { space_id: "other" },
        { disposition: { humour: 2 } },
        { disposition: { skepticism: 6 } },
        { disposition: { literalism: 0 } },
        { disposition: { empathy: 2.5 } },
        { disposition: { empathy: "3" } },
        { mission: 42 },
        { mission: "x".repeat(4001) }
      ]
      for (const json of bad) {
        const reply = yield* call("PUT", profile, { token: key, offContract: json })
        expect(reply.status, JSON.stringify(json)).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
      expect((yield* call("GET", profile, { token: key })).body.mission).toBe("")
    }))

  it.effect("an unknown space is 404 not_found; another organization's is 403 forbidden", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const other = yield* signup("other")
      const otherKey = (yield* createKey(other.token)).raw_key
      for (const path of ["profile", "reason-settings"]) {
        const missing = yield* callRaw("GET", `/v1/spaces/${unique("nowhere")}/${path}`, { token: key })
        expect(missing.status).toBe(404)
        expect(missing.body.error.code).toBe("not_found")
        for (const [method, json] of [["GET", undefined], ["PUT", {}], ["DELETE", undefined]] as const) {
          const foreign = yield* callRaw(method, `/v1/spaces/${spaceId}/${path}`, { token: otherKey, json })
          expect(foreign.status).toBe(403)
          expect(foreign.body.error.code).toBe("forbidden")
        }
      }
    }))
})

eachProfileWithFakeModel("reason settings", (it) => {
  it.effect("unset is null; a name, short name or tier is stored as the resolved full id; null and DELETE reset", () =>
    Effect.gen(function*() {
      const { key, settings, spaceId } = yield* setup
      expect((yield* call("GET", settings, { token: key })).body).toEqual({ space_id: spaceId, model: null })

      // `fast` is a tier (served by the local engine here): what is stored is the model it points at now.
      const tier = yield* call("PUT", settings, { token: key, json: { model: "fast" } })
      expect(tier.status, tier.text).toBe(200)
      expect(tier.body).toEqual({ space_id: spaceId, model: LOCAL })
      expect((yield* call("GET", settings, { token: key })).body.model).toBe(LOCAL)
      expect((yield* call("PUT", settings, { token: key, json: { model: "echo" } })).body.model).toBe(ECHO)
      expect((yield* call("PUT", settings, { token: key, json: { model: "balanced" } })).body.model).toBe(ECHO)
      expect((yield* call("PUT", settings, { token: key, json: { model: LOCAL } })).body.model).toBe(LOCAL)

      expect((yield* call("PUT", settings, { token: key, json: { model: null } })).body).toEqual({ space_id: spaceId, model: null })
      expect((yield* call("GET", settings, { token: key })).body.model).toBeNull()

      yield* call("PUT", settings, { token: key, json: { model: "echo" } })
      expect((yield* call("DELETE", settings, { token: key })).status).toBe(204)
      expect((yield* call("GET", settings, { token: key })).body.model).toBeNull()
      expect((yield* call("DELETE", settings, { token: key })).status).toBe(204)
    }))

  it.effect("an unserved model is 400 unsupported_model listing the served ones, and nothing changes", () =>
    Effect.gen(function*() {
      const { key, owner, settings } = yield* setup
      yield* call("PUT", settings, { token: key, json: { model: "echo" } })
      const refused = yield* call("PUT", settings, { token: key, json: { model: "gpt-9" } })
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe("unsupported_model")
      for (const name of ["gpt-9", LOCAL, ECHO, "acme/busy-1", "balanced", "fast"]) expect(refused.body.error.message).toContain(name)
      expect((yield* call("GET", settings, { token: key })).body.model).toBe(ECHO)
      expect((yield* call("PUT", settings, { token: key, json: { model: "" } })).status).toBe(422)
      expect((yield* call("PUT", settings, { token: key, offContract: { model: "echo", extra: 1 } })).status).toBe(422)
      // Any member of the organization may set it (only the profile is owner-only).
      const member = yield* addMember(owner, "member")
      expect((yield* call("PUT", settings, { token: member.token, json: { model: "local" } })).body.model).toBe(LOCAL)
    }))
})

eachProfileWithFakeModel("reason", (it) => {
  it.effect("the model is the request's, else the space's setting, else the platform default", () =>
    Effect.gen(function*() {
      const { key, put, reason, settings } = yield* setup
      yield* put("Priya renewed the annual support contract in March.")
      const byDefault = yield* reason({ query: "When did Priya renew?" })
      expect(byDefault.status, byDefault.text).toBe(200)
      expect(byDefault.body.model).toBe(ECHO)

      yield* call("PUT", settings, { token: key, json: { model: "fast" } })
      const bySetting = yield* reason({ query: "When did Priya renew?" })
      expect(bySetting.body.model).toBe(LOCAL)
      expect(bySetting.body.insights).toContain("Priya renewed the annual support contract")

      for (const name of ["echo", "balanced", ECHO]) {
        expect((yield* reason({ query: "When did Priya renew?", model: name })).body.model).toBe(ECHO)
      }
      yield* call("DELETE", settings, { token: key })
      expect((yield* reason({ query: "When did Priya renew?" })).body.model).toBe(ECHO)

      const refused = yield* reason({ query: "When did Priya renew?", model: "claude-99" })
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe("unsupported_model")
      expect(refused.body.error.message).toContain(LOCAL)
    }))

  it.effect("answers with insights, the model that answered, and usage summed over every call of the pass", () =>
    Effect.gen(function*() {
      const { callsDuring, put, reason } = yield* setup
      yield* put("Omar moved the office to Lisbon in 2022.")
      const quick = yield* callsDuring(reason({ query: "Where is Omar's office?", depth: "quick" }))
      expect(quick.result.status).toBe(200)
      expect(Object.keys(quick.result.body).sort()).toEqual(["insights", "model", "usage"])
      expect(quick.calls).toHaveLength(1)
      expect(quick.result.body.insights).toMatch(/^answer \d+$/)
      expect(quick.result.body.usage).toEqual({ input_tokens: USAGE.prompt_tokens, output_tokens: USAGE.completion_tokens })

      const standard = yield* callsDuring(reason({ query: "Where is Omar's office?" }))
      expect(standard.calls).toHaveLength(1)

      // thorough drafts, then has the model review its draft against the memories: two calls, one usage.
      const thorough = yield* callsDuring(reason({ query: "Where is Omar's office?", depth: "thorough" }))
      expect(thorough.calls).toHaveLength(2)
      expect(thorough.result.body.usage).toEqual({ input_tokens: 2 * USAGE.prompt_tokens, output_tokens: 2 * USAGE.completion_tokens })
      // The fake numbers its answers by call: the review sees the draft, and its own answer is the insight.
      expect(thorough.calls[1]!.system).toContain(`Draft:\nanswer ${thorough.before + 1}`)
      expect(thorough.result.body.insights).toBe(`answer ${thorough.before + 2}`)
      for (const c of thorough.calls) {
        expect(c.user).toBe("Where is Omar's office?")
        expect(c.system).toContain("Omar moved the office to Lisbon in 2022.")
      }
    }))

  it.effect("the system prompt carries the space's name, mission and disposition in words", () =>
    Effect.gen(function*() {
      const { callsDuring, key, profile, put, reason } = yield* setup
      yield* put("Lena reported that invoices arrive twice.")
      const plain = yield* callsDuring(reason({ query: "What did Lena report?" }))
      const system = plain.calls[0]!.system
      expect(system).toContain(`"Support Bot"`)
      expect(system).not.toContain("Mission")
      for (const trait of ["Skepticism 3/5", "Literalism 3/5", "Empathy 3/5"]) expect(system).toContain(trait)
      expect(numberedLines(system)[0]).toBe("1. Lena reported that invoices arrive twice.")

      yield* call("PUT", profile, {
        token: key,
        json: { mission: "Resolve billing tickets.", disposition: { skepticism: 5, literalism: 1, empathy: 5 } }
      })
      const shaped = (yield* callsDuring(reason({ query: "What did Lena report?" }))).calls[0]!.system
      expect(shaped).toContain("Mission of this space: Resolve billing tickets.")
      expect(shaped).toContain("Skepticism 5/5: Be strongly skeptical")
      expect(shaped).toContain("Literalism 1/5: Read the question loosely")
      expect(shaped).toContain("Empathy 5/5: Weigh emotion heavily")
    }))

  it.effect("depth: quick recalls fewer memories; standard also follows the entities the first recall names", () =>
    Effect.gen(function*() {
      const { callsDuring, put, reason } = yield* setup
      yield* put("Caroline adopted a puppy named Biscuit from the shelter.")
      yield* put("Biscuit sleeps on a blue cushion by the window.")
      for (let i = 0; i < 25; i++) yield* put(`A neighbour adopted ${i + 2} goldfish for the garden pond.`)
      const quick = (yield* callsDuring(reason({ query: "What did Caroline adopt?", depth: "quick" }))).calls[0]!.system
      expect(numberedLines(quick)).toHaveLength(8)
      expect(numberedLines(quick)[0]).toContain("Caroline adopted a puppy named Biscuit")
      expect(quick).not.toContain("blue cushion")
      const standard = (yield* callsDuring(reason({ query: "What did Caroline adopt?" }))).calls[0]!.system
      expect(standard).toContain("Biscuit sleeps on a blue cushion by the window.")
      expect(numberedLines(standard).length).toBeGreaterThan(20)
    }))

  it.effect("the local engine answers from the memories, with no LLM", () =>
    Effect.gen(function*() {
      const { put, reason } = yield* setup
      const empty = yield* reason({ query: "What does Ana drink?", model: "local" })
      expect(empty.status).toBe(200)
      expect(empty.body.insights).toBe("I have no stored memories about that yet.")
      yield* put("Ana drinks green tea every morning.")
      yield* put("The printer on floor two is broken.")
      const reply = yield* reason({ query: "What does Ana drink?", model: "local", depth: "thorough" })
      expect(reply.body.model).toBe(LOCAL)
      expect(reply.body.insights).toContain("Ana drinks green tea every morning.")
      expect(reply.body.insights).not.toContain("printer")
      expect(reply.body.usage.input_tokens).toBeGreaterThan(0)
      expect(reply.body.usage.output_tokens).toBeGreaterThan(0)
      const once = yield* reason({ query: "What does Ana drink?", model: "local", depth: "quick" })
      // Two calls (draft and review) of the same size: twice the usage of one.
      expect(reply.body.usage.output_tokens).toBe(2 * once.body.usage.output_tokens)
    }))

  it.effect("model failures pass through as model_throttled and model_unavailable", () =>
    Effect.gen(function*() {
      const { put, reason } = yield* setup
      yield* put("Ivo runs the Friday deploy.")
      const busy = yield* reason({ query: "Who deploys?", model: "busy" })
      expect(busy.status).toBe(429)
      expect(busy.body.error.code).toBe("model_throttled")
      const down = yield* reason({ query: "Who deploys?", model: "acme/down-1" })
      expect(down.status).toBe(503)
      expect(down.body.error.code).toBe("model_unavailable")
    }))

  it.effect("request validation, unknown space 404 not_found, another organization's space 403", () =>
    Effect.gen(function*() {
      const { key, reason, spaceId } = yield* setup
      const missing = yield* call("POST", "/v1/reason", { token: key, offContract: { space_id: spaceId } })
      expect(missing.status).toBe(400)
      expect(missing.body.error.code).toBe("bad_request")
      expect((yield* call("POST", "/v1/reason", { token: key, offContract: { query: "x" } })).status).toBe(400)
      for (const body of [{ query: "x", depth: "deep" }, { query: "x", temperature: 1 }, { query: "" }, { query: "x", model: 5 }]) {
        const reply = yield* reason(body)
        expect(reply.status, JSON.stringify(body)).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
      const nowhere = yield* call("POST", "/v1/reason", { token: key, json: { space_id: unique("nowhere"), query: "x" } })
      expect(nowhere.status).toBe(404)
      expect(nowhere.body.error.code).toBe("not_found")
      const other = yield* signup("other")
      const otherKey = (yield* createKey(other.token)).raw_key
      const foreign = yield* reason({ query: "x" }, otherKey)
      expect(foreign.status).toBe(403)
      expect(foreign.body.error.code).toBe("forbidden")
      expect((yield* call("POST", "/v1/reason", { json: { space_id: spaceId, query: "x" } })).status).toBe(401)
    }))
})
