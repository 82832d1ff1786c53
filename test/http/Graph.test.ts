/**
 * Entities and the co-occurrence graph over real HTTP: canonical names
 * (case, possessives), what is not an entity (calendar words, capitalised
 * common words, scope ids), counts and times kept in step with writes,
 * replacements and deletes, the graph's parameters and totals.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `graph-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const made = yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })
  expect(made.status, made.text).toBe(201)
  const record = (content: string, extra: Record<string, unknown> = {}) =>
    Effect.flatMap(call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } }), (reply) => {
      expect(reply.status, reply.text).toBe(200)
      return Effect.succeed(reply.body)
    })
  const entities = Effect.map(call("GET", `/v1/spaces/${spaceId}/entities`, { token: key }), (r) => r.body)
  const graph = (query = "") => callRaw("GET", `/v1/spaces/${spaceId}/graph${query}`, { token: key })
  return { key, spaceId, record, entities, graph }
})

const byName = (items: ReadonlyArray<any>, name: string) => items.find((e) => e.name === name)

eachProfile("entities and graph", (it) => {
  it.effect("names merge across case and possessives; calendar words, common words and scope ids are not entities", () =>
    Effect.gen(function*() {
      const { entities, key, record, spaceId } = yield* setup
      yield* record("Caroline adopted a dog in Lisbon.", { timestamp: "2024-01-10T10:00:00Z" })
      yield* record("From Monday on, Caroline's dog sleeps in the garden.", { timestamp: "2024-02-10T10:00:00Z" })
      yield* record("Melanie met caroline in Lisbon in May.", { timestamp: "2024-03-10T10:00:00Z", user_id: "user_8812" })
      yield* record("I visited user_8812 yesterday.", { timestamp: "2024-03-11T10:00:00Z", user_id: "user_8812" })

      // A user whose id is her name is the person her facts name: an entity of the graph.
      yield* record("I'm allergic to peanuts.", { timestamp: "2024-03-12T10:00:00Z", user_id: "marta" })
      yield* record("My sister lives in Lisbon.", { timestamp: "2024-03-13T10:00:00Z", user_id: "marta" })

      const list = yield* entities
      const names = list.items.map((e: { name: string }) => e.name)
      expect(names.filter((n: string) => n.toLowerCase().startsWith("caroline"))).toEqual(["Caroline"])
      expect(byName(list.items, "Marta")).toMatchObject({ mention_count: 2, first_seen: "2024-03-12T10:00:00.000Z" })
      for (const notEntity of ["From", "Monday", "May", "user_8812"]) expect(names).not.toContain(notEntity)
      expect(list).toMatchObject({ total: list.items.length, limit: 100, offset: 0 })
      const caroline = byName(list.items, "Caroline")
      expect(caroline).toEqual({
        id: expect.stringMatching(/^ent_/),
        name: "Caroline",
        mention_count: 3,
        first_seen: "2024-01-10T10:00:00.000Z",
        last_seen: "2024-03-10T10:00:00.000Z"
      })
      expect(list.items[0].name).toBe("Caroline")

      const detail = yield* call("GET", `/v1/spaces/${spaceId}/entities/${caroline!.id}`, { token: key })
      expect(detail.status).toBe(200)
      expect(detail.body).toMatchObject({ ...caroline })
      expect(detail.body.observations).toHaveLength(3)
      expect(detail.body.observations[0]).toEqual({ text: expect.stringContaining("Melanie"), mentioned_at: "2024-03-10T10:00:00.000Z" })
      const missing = yield* call("GET", `/v1/spaces/${spaceId}/entities/ent_nope`, { token: key })
      expect(missing.status).toBe(404)
      expect(missing.body.error.code).toBe("not_found")

      const paged = yield* call("GET", `/v1/spaces/${spaceId}/entities?limit=1&offset=1`, { token: key })
      expect(paged.body.items).toHaveLength(1)
      expect(paged.body).toMatchObject({ total: list.total, limit: 1, offset: 1 })
    }))

  it.effect("the graph: co-occurrence weights, last_co_occurred, min_count, limit, totals; deletes and replacements follow", () =>
    Effect.gen(function*() {
      const { entities, graph, key, record, spaceId } = yield* setup
      yield* record("Alice and Bob flew to Paris.", { timestamp: "2024-01-01T00:00:00Z" })
      yield* record("Alice and Bob hiked near Paris.", { timestamp: "2024-02-01T00:00:00Z" })
      const third = yield* record("Alice called Carlos.", { timestamp: "2024-03-01T00:00:00Z", document_id: "call-notes" })

      const whole = yield* graph()
      expect(whole.status, whole.text).toBe(200)
      const label = (id: string) => whole.body.nodes.find((n: { id: string }) => n.id === id)?.label
      const edge = (a: string, b: string) =>
        whole.body.edges.find((e: { source: string; target: string }) =>
          [label(e.source), label(e.target)].sort().join("+") === [a, b].sort().join("+"))
      expect(whole.body.nodes.map((n: { label: string }) => n.label).sort()).toEqual(["Alice", "Bob", "Carlos", "Paris"])
      expect(whole.body.nodes.find((n: { label: string }) => n.label === "Alice")).toMatchObject({ mention_count: 3 })
      expect(edge("Alice", "Bob")).toMatchObject({ weight: 2, last_co_occurred: "2024-02-01T00:00:00.000Z" })
      expect(edge("Alice", "Bob").source_label).toBe(label(edge("Alice", "Bob").source))
      expect(edge("Alice", "Carlos")).toMatchObject({ weight: 1, last_co_occurred: "2024-03-01T00:00:00.000Z" })
      expect(whole.body).toMatchObject({ total_entities: 4, total_edges: 4 })

      const frequent = yield* graph("?min_count=2")
      expect(frequent.body.nodes.map((n: { label: string }) => n.label).sort()).toEqual(["Alice", "Bob", "Paris"])
      expect(frequent.body).toMatchObject({ total_entities: 3, total_edges: 3 })
      const top = yield* graph("?limit=1")
      expect(top.body.nodes.map((n: { label: string }) => n.label)).toEqual(["Alice"])
      expect(top.body.edges).toEqual([])
      expect(top.body).toMatchObject({ total_entities: 4, total_edges: 4 })
      for (const bad of ["?limit=0", "?limit=2001", "?min_count=0", "?limit=abc"]) {
        const reply = yield* graph(bad)
        expect(reply.status, bad).toBe(422)
        expect(reply.body.error.code).toBe("validation_error")
      }

      // Replacing the document uncounts its old memory and counts the new one.
      yield* record("Alice wrote to Dana.", { timestamp: "2024-04-01T00:00:00Z", document_id: "call-notes" })
      const replaced = yield* graph()
      const labels = replaced.body.nodes.map((n: { label: string }) => n.label).sort()
      expect(labels).toEqual(["Alice", "Bob", "Dana", "Paris"])
      const alice = byName((yield* entities).items, "Alice")
      expect(alice).toMatchObject({ mention_count: 3, last_seen: "2024-04-01T00:00:00.000Z" })
      expect(third.memories.length).toBe(1)

      // Deleting a memory uncounts it; times are read again from what remains.
      const memories = yield* call("GET", `/v1/spaces/${spaceId}/memories?document_id=call-notes`, { token: key })
      yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${memories.body.items[0].id}`, { token: key })
      const after = (yield* entities).items
      expect(byName(after, "Dana")).toBeUndefined()
      expect(byName(after, "Alice")).toMatchObject({ mention_count: 2, last_seen: "2024-02-01T00:00:00.000Z" })
      const final = yield* graph()
      expect(final.body).toMatchObject({ total_entities: 3, total_edges: 3 })
    }))
})
