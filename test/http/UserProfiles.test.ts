import { SqlClient } from "@effect/sql"
import type { WireBody } from "../../src/client/Wire.ts"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"
import { readFenced } from "../support/Fenced.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("people")
  expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
  /** Records one memory and answers it as stored. */
  const put = (content: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } }).pipe(
      Effect.map((r) => {
        expect(r.status, r.text).toBe(200)
        return r.body.memories[0] as { memory_id: string; created_at: string; content: string }
      })
    )
  const profile = (userId: string, query = "", token = key) =>
    callRaw("GET", `/v1/spaces/${spaceId}/users/${userId}/profile${query === "" ? "" : `?${query}`}`, { token })
  const ask = (userId: string, body: WireBody<"POST", `/v1/spaces/${string}/users/${string}/ask`>, token = key) =>
    call("POST", `/v1/spaces/${spaceId}/users/${userId}/ask`, { token, json: body })
  /** A body the contract does not take, to see the refusal. */
  const askOffContract = (userId: string, body: unknown) => call("POST", `/v1/spaces/${spaceId}/users/${userId}/ask`, { token: key, offContract: body })
  /**
   * A consolidated note over `facts` (consolidation is not built yet, so the
   * test writes the row the loop would write, under the facts' own document).
   */
  const note = (text: string, facts: ReadonlyArray<string>, userId: string | null, state = "active") =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const id = unique("mem_note")
      yield* sql`INSERT INTO memories (id, org_id, space_id, document_id, text, type, state, user_id, event_time,
          source_ids, created_at, updated_at)
        SELECT ${id}, org_id, space_id, document_id, ${text}, 'note', ${state}, ${userId}, event_time,
          ${facts as Array<string>}::text[], now(), now()
        FROM memories WHERE id = ${facts[0]!}`
      return id
    }).pipe(Effect.orDie)
  const ids = (reply: { body: any }) => reply.body.memories.map((m: any) => m.id) as Array<string>
  return { owner, key, spaceId, put, profile, ask, askOffContract, note, ids }
})

eachProfile("user profiles", (it) => {
  it.effect("a user's memories only, newest first, with memory_count, first_seen and last_active from record time", () =>
    Effect.gen(function*() {
      const { ids, profile, put, spaceId } = yield* setup
      const first = yield* put("Alice prefers window seats on long flights.", { user_id: "alice", metadata: { src: "chat" } })
      yield* Effect.sleep("15 millis")
      const second = yield* put("Alice is allergic to peanuts.", { user_id: "alice", timestamp: "2020-01-01T00:00:00Z" })
      yield* Effect.sleep("15 millis")
      const third = yield* put("Alice works at Northwind as a pilot.", { user_id: "alice", session_id: "s1" })
      yield* put("Bob prefers aisle seats.", { user_id: "bob" })
      yield* put("The office closes at six.")

      const reply = yield* profile("alice")
      expect(reply.status, reply.text).toBe(200)
      expect(Object.keys(reply.body).sort()).toEqual(
        ["context", "first_seen", "last_active", "memories", "memory_count", "space_id", "token_estimate", "user_id"]
      )
      expect(reply.body).toMatchObject({
        space_id: spaceId,
        user_id: "alice",
        memory_count: 3,
        first_seen: first.created_at,
        last_active: third.created_at,
        context: null,
        token_estimate: null
      })
      expect(ids(reply)).toEqual([third.memory_id, second.memory_id, first.memory_id])
      const item = reply.body.memories[2]
      for (const field of ["id", "text", "context", "date", "type", "entities", "metadata", "source_ids", "user_id", "agent_id", "session_id", "member_id"]) {
        expect(item).toHaveProperty(field)
      }
      expect(item).toMatchObject({ text: first.content, type: "fact", user_id: "alice", metadata: { src: "chat" }, source_ids: [] })
      // The profile view shows entities as one string.
      expect(typeof item.entities).toBe("string")
      expect(reply.body.memories[0].entities).toContain("Northwind")
      // first_seen is record time, not event time (the second write claimed 2020).
      expect(reply.body.memories[1].date).toBe("2020-01-01T00:00:00.000Z")
      expect(reply.body.first_seen > "2021").toBe(true)

      const page = yield* profile("alice", "limit=1&offset=1")
      expect(ids(page)).toEqual([second.memory_id])
      expect(page.body.memory_count).toBe(3)
      expect(ids(yield* profile("bob"))).toHaveLength(1)
    }))

  it.effect("an unknown user is an empty profile; retired memories are left out", () =>
    Effect.gen(function*() {
      const { key, profile, put, spaceId } = yield* setup
      yield* put("Carol plays the cello.", { user_id: "carol" })
      const nobody = yield* profile("nobody")
      expect(nobody.status).toBe(200)
      expect(nobody.body).toEqual({
        space_id: spaceId,
        user_id: "nobody",
        memory_count: 0,
        first_seen: null,
        last_active: null,
        memories: [],
        context: null,
        token_estimate: null
      })
      const only = (yield* profile("carol")).body.memories[0].id
      const retired = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${only}`, { token: key, json: { state: "retired" } })
      expect(retired.status).toBe(200)
      expect((yield* profile("carol")).body).toMatchObject({ memory_count: 0, first_seen: null, last_active: null, memories: [] })
    }))

  it.effect("memory_type: note shows notes, fact shows facts not consolidated, omitted collapses facts into their notes", () =>
    Effect.gen(function*() {
      const { ids, note, profile, put } = yield* setup
      const a = (yield* put("Dan runs every morning.", { user_id: "dan" })).memory_id
      const b = (yield* put("Dan ran the Berlin marathon.", { user_id: "dan" })).memory_id
      const c = (yield* put("Dan owns a grey cat.", { user_id: "dan" })).memory_id
      const d = (yield* put("Dan drinks black coffee.", { user_id: "dan" })).memory_id
      const running = yield* note("Dan is a committed runner.", [a, b], "dan")
      // A retired note consolidates nothing: its facts stay in view.
      yield* note("Dan likes coffee.", [d], "dan", "retired")
      const sorted = (xs: Array<string>) => [...xs].sort()

      const notes = yield* profile("dan", "memory_type=note")
      expect(ids(notes)).toEqual([running])
      expect(notes.body.memories[0]).toMatchObject({ type: "note", source_ids: [a, b] })
      expect(notes.body.memory_count).toBe(1)

      const facts = yield* profile("dan", "memory_type=fact")
      expect(sorted(ids(facts))).toEqual(sorted([c, d]))
      expect(facts.body.memory_count).toBe(2)

      const collapsed = yield* profile("dan")
      expect(sorted(ids(collapsed))).toEqual(sorted([running, c, d]))
      expect(collapsed.body.memory_count).toBe(3)
      expect(ids(yield* profile("dan", "memory_type=summary"))).toEqual([])
      expect((yield* profile("dan", "memory_type=opinion")).status).toBe(422)
    }))

  it.effect("format=block renders the page as numbered text; context_max_tokens drops whole memories, oldest first", () =>
    Effect.gen(function*() {
      const { ids, profile, put } = yield* setup
      for (const city of ["Rome", "Paris", "Tokyo", "Lima"]) {
        yield* put(`Eve flew to ${city} for a photography workshop.`, { user_id: "eve" })
      }
      const block = yield* profile("eve", "format=block")
      expect(block.status).toBe(200)
      const lines = readFenced(block.body.context).lines
      expect(lines).toHaveLength(4)
      lines.forEach((line: string, i: number) => expect(line).toBe(`${i + 1}. ${block.body.memories[i].text}`))
      expect(block.body.token_estimate).toBe(Math.ceil(block.body.context.length / 4))
      expect(block.body.memory_count).toBe(4)

      // The budget bounds the whole section, frame included: room for the frame and two lines.
      const frame = block.body.context.length - lines.join("\n").length
      const budget = Math.ceil((frame + lines[0].length + 1 + lines[1].length) / 4)
      const tight = yield* profile("eve", `format=block&context_max_tokens=${budget}`)
      expect(ids(tight)).toEqual(ids(block).slice(0, 2))
      expect(readFenced(tight.body.context).lines).toEqual(lines.slice(0, 2))
      expect(tight.body.token_estimate).toBeLessThanOrEqual(budget)

      const results = yield* profile("eve", "format=results")
      expect(results.body).toMatchObject({ context: null, token_estimate: null })
      const misplaced = yield* profile("eve", "context_max_tokens=50")
      expect(misplaced.status).toBe(422)
      expect(misplaced.body.error.code).toBe("validation_error")
      const empty = yield* profile("nobody", "format=block")
      expect(empty.body).toMatchObject({ memories: [], context: "", token_estimate: 0 })
    }))

  it.effect("query validation: limit 1 to 200, offset from 0, format", () =>
    Effect.gen(function*() {
      const { profile } = yield* setup
      for (const query of ["limit=0", "limit=201", "limit=x", "offset=-1", "format=xml", "format=block&context_max_tokens=0"]) {
        const reply = yield* profile("frank", query)
        expect(reply.status, query).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }
      expect((yield* profile("frank", "limit=200")).status).toBe(200)
    }))

  it.effect("an unknown space is 404 space_not_found; another organization's space is 403 and shows nothing", () =>
    Effect.gen(function*() {
      const { ask, key, profile, put } = yield* setup
      yield* put("Gina manages the Oslo team.", { user_id: "gina" })
      for (const reply of [
        yield* call("GET", `/v1/spaces/${unique("nowhere")}/users/gina/profile`, { token: key }),
        yield* call("POST", `/v1/spaces/${unique("nowhere")}/users/gina/ask`, { token: key, json: { query: "who?" } })
      ]) {
        expect(reply.status).toBe(404)
        expect(reply.body.error.code).toBe("space_not_found")
      }
      const other = yield* signup("other")
      const otherKey = (yield* createKey(other.token)).raw_key
      const foreign = yield* profile("gina", "", otherKey)
      expect(foreign.status).toBe(403)
      expect(foreign.text).not.toContain("Oslo")
      const foreignAsk = yield* ask("gina", { query: "Who does Gina manage?" }, otherKey)
      expect(foreignAsk.status).toBe(403)
      expect(foreignAsk.text).not.toContain("Oslo")
    }))
})

eachProfile("ask about a user", (it) => {
  it.effect("answers from that user's memories only, with usage; nothing found is insights and usage null", () =>
    Effect.gen(function*() {
      const { ask, put, spaceId } = yield* setup
      yield* put("Hana drinks oat milk lattes.", { user_id: "hana" })
      yield* put("Hana drinks green tea at night.", { user_id: "hana", session_id: "s9" })
      yield* put("Ivan drinks oat milk lattes too.", { user_id: "ivan" })
      yield* put("Everyone drinks oat milk lattes at the offsite.")

      const reply = yield* ask("hana", { query: "What does Hana drink?" })
      expect(reply.status, reply.text).toBe(200)
      expect(Object.keys(reply.body).sort()).toEqual(["insights", "space_id", "usage", "user_id"])
      expect(reply.body).toMatchObject({ space_id: spaceId, user_id: "hana" })
      expect(reply.body.insights).toContain("Hana drinks oat milk lattes.")
      expect(reply.body.insights).toContain("Hana drinks green tea at night.")
      expect(reply.body.insights).not.toContain("Ivan")
      expect(reply.body.insights).not.toContain("Everyone")
      expect(reply.body.usage.input_tokens).toBeGreaterThan(0)
      expect(reply.body.usage.output_tokens).toBeGreaterThan(0)

      const thorough = yield* ask("hana", { query: "What does Hana drink?", depth: "thorough", model: "fast" })
      expect(thorough.body.usage.output_tokens).toBe(2 * reply.body.usage.output_tokens)

      const unknown = yield* ask("nobody", { query: "What does Hana drink?" })
      expect(unknown.status).toBe(200)
      expect(unknown.body).toEqual({ space_id: spaceId, user_id: "nobody", insights: null, usage: null })
    }))

  it.effect("the model resolves like reason's; validation follows the spec", () =>
    Effect.gen(function*() {
      const { ask, askOffContract, key, put, spaceId } = yield* setup
      yield* put("Jon plays chess on Sundays.", { user_id: "jon" })
      yield* call("PUT", `/v1/spaces/${spaceId}/reason-settings`, { token: key, json: { model: "local" } })
      expect((yield* ask("jon", { query: "When does Jon play chess?" })).status).toBe(200)
      const refused = yield* ask("jon", { query: "When does Jon play chess?", model: "gpt-9" })
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe("unsupported_model")
      expect(refused.body.error.message).toContain("engram/local-extractive-1")
      expect((yield* askOffContract("jon", {})).status).toBe(400)
      expect((yield* askOffContract("jon", { query: "x", user_id: "other" })).status).toBe(422)
      expect((yield* askOffContract("jon", { query: "x", depth: "deep" })).status).toBe(422)
    }))
})
