/**
 * Facts become notes: related facts of one subject share a note that says
 * what they say, dated; a changed attribute is stated as its current value;
 * notes stand in for their facts unless prefer_observations is false; deletes
 * follow provenance; every run is recorded with its counts.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `notes-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const record = (content: string, timestamp: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, timestamp, ...extra } }).pipe(
      Effect.tap((reply) => expect(reply.status, reply.text).toBe(200)),
      Effect.map((reply) => reply.body.memories.map((m: any) => m.memory_id as string))
    )
  const list = (query = "") =>
    call("GET", `/v1/spaces/${spaceId}/memories?limit=200${query}`, { token: key }).pipe(Effect.map((r) => r.body.items as Array<any>))
  const status = call("GET", `/v1/spaces/${spaceId}/consolidation`, { token: key }).pipe(Effect.map((r) => r.body))
  /** Waits until no fact is pending and at least `runs` runs are recorded. */
  const settled = (runs = 1) =>
    Effect.gen(function*() {
      for (let waited = 0; waited < 30_000; waited += 200) {
        const now = yield* status
        if (now.pending_facts === 0 && now.runs.length >= runs) return now
        yield* Effect.sleep("200 millis")
      }
      return yield* Effect.dieMessage("consolidation did not settle")
    })
  return { key, spaceId, record, list, status, settled }
})

eachProfile("consolidation", (it) => {
  it.effect("related facts of one subject become a dated note; an unrelated one stays alone; runs are recorded", () =>
    Effect.gen(function*() {
      const { key, list, record, settled, spaceId } = yield* setup
      const [pottery] = yield* record("Zara: I signed up for a pottery class at the Riverside studio on Mondays.", "2024-03-04T18:00:00Z")
      const [teacher] = yield* record("Zara: My pottery teacher at the Riverside studio says my bowls are getting better.", "2024-04-15T18:00:00Z")
      const [cello] = yield* record("Zara: I bought a cello and booked weekly lessons.", "2024-05-02T10:00:00Z")
      const status = yield* settled()
      expect(status).toMatchObject({ enabled: true, engine: "offline", pending_facts: 0 })
      expect(status.runs[0]).toMatchObject({ engine: "offline", observations_created: 1, error_message: null })

      const notes = yield* list("&type=note")
      expect(notes).toHaveLength(1)
      const note = notes[0]
      expect([...note.source_ids].sort()).toEqual([pottery, teacher].sort())
      expect(note.text).toContain("pottery class at the Riverside studio")
      expect(note.text).toContain("bowls are getting better")
      expect(note.text.indexOf("4 March 2024")).toBeLessThan(note.text.indexOf("15 April 2024"))
      expect(note.text).not.toContain("cello")
      expect(note.metadata).toMatchObject({ subject: "Zara" })

      // The default views show the note in place of its facts; prefer_observations=false shows both.
      const collapsed = (yield* list()).map((m) => m.id)
      expect(collapsed).toEqual(expect.arrayContaining([note.id, cello]))
      expect(collapsed).not.toContain(pottery)
      const everything = (yield* list("&prefer_observations=false")).map((m) => m.id)
      expect(everything).toEqual(expect.arrayContaining([note.id, cello, pottery, teacher]))

      // A recall weighs the note against its facts: asked what one of them says, that fact ranks above the note (which
      // says both, with their dates, in more words), so the fact goes in and the note is left out (#35).
      const found = yield* call("POST", "/v1/retrieve", {
        token: key,
        json: { space_id: spaceId, query: "What does Zara's pottery teacher think of her bowls?", receipt: true, receipt_detail: "basic" }
      })
      expect(found.body.results[0].memory_id).toBe(teacher)
      const ids = found.body.results.map((r: any) => r.memory_id)
      expect(ids).not.toContain(note.id)
      const receipt = yield* call("GET", `/v1/receipts/${found.body.receipt_id}`, { token: key })
      const left = receipt.body.excluded.find((e: any) => e.memory_id === note.id)
      expect(left).toMatchObject({ reason: "dedup" })
      expect(left.detail).toMatch(/^its facts rank above it for this query \(score [0-9.]+ against [0-9.]+\)$/)
      const both = yield* call("POST", "/v1/retrieve", {
        token: key,
        json: { space_id: spaceId, query: "What does Zara's pottery teacher think of her bowls?", prefer_observations: false }
      })
      expect(both.body.results.map((r: any) => r.memory_id)).toEqual(expect.arrayContaining([note.id, teacher]))
    }))

  it.effect("a newer value of an attribute makes the note state it, with when it changed; the current value ranks first", () =>
    Effect.gen(function*() {
      const { key, list, record, settled, spaceId } = yield* setup
      const [paris] = yield* record("Alice: I live in Paris, near the canal.", "2023-02-10T09:00:00Z")
      const [lisbon] = yield* record("Alice: I moved to Lisbon last week.", "2024-06-20T09:00:00Z")
      yield* settled()
      const notes = yield* list("&type=note")
      expect(notes).toHaveLength(1)
      // "last week", said on 20 June, is the span the fact was stored with (the week before, and some days of slack), not a day.
      expect(notes[0].text).toBe("Alice lives in Lisbon, since 10–19 June 2024. Before that: Paris (10 February 2023).")
      expect([...notes[0].source_ids].sort()).toEqual([paris, lisbon].sort())
      expect(notes[0].metadata).toMatchObject({ subject: "Alice", attribute: "residence" })

      const where = (extra: Record<string, unknown>) =>
        call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "Where does Alice live?", ...extra } }).pipe(
          Effect.map((r) => r.body.results.map((m: any) => m.memory_id as string))
        )
      expect((yield* where({}))[0]).toBe(notes[0].id)
      const raw = yield* where({ prefer_observations: false, memory_type: ["fact"] })
      expect(raw.indexOf(lisbon)).toBeLessThan(raw.indexOf(paris))
      // Facts stay, as evidence.
      expect((yield* list("&prefer_observations=false&type=fact")).map((m) => m.id)).toEqual(expect.arrayContaining([paris, lisbon]))
    }))

  it.effect("deleting or retiring a fact takes the note built on it along; no deleted words survive in a note", () =>
    Effect.gen(function*() {
      const { key, list, record, settled, spaceId, status } = yield* setup
      const [a] = yield* record("Omar: I adopted a rescue greyhound named Biscuit from the shelter.", "2024-01-05T10:00:00Z")
      const [b] = yield* record("Omar: Biscuit the greyhound loves the beach at dawn.", "2024-02-05T10:00:00Z")
      const [c] = yield* record("Omar: Biscuit the greyhound won a ribbon at the dog show.", "2024-03-05T10:00:00Z")
      yield* settled()
      const before = (yield* list("&type=note"))[0]
      expect([...before.source_ids].sort()).toEqual([a, b, c].sort())

      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${c}`, { token: key })).status).toBe(204)
      // At once: the note built on the deleted fact is gone.
      expect((yield* list("&type=note&prefer_observations=false")).some((n) => n.id === before.id)).toBe(false)
      const afterDelete = yield* settled(3)
      expect(afterDelete.runs.some((r: any) => r.engine === "provenance" && r.observations_deleted === 1)).toBe(true)
      const rebuilt = yield* list("&type=note")
      expect(rebuilt).toHaveLength(1)
      expect([...rebuilt[0].source_ids].sort()).toEqual([a, b].sort())
      expect(rebuilt[0].text).not.toContain("ribbon")

      // Retiring a fact does the same; restoring it brings it back into a note.
      expect((yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${b}`, { token: key, json: { state: "retired" } })).status).toBe(200)
      yield* settled(4)
      expect(yield* list("&type=note")).toHaveLength(0)
      expect((yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${b}`, { token: key, json: { state: "active" } })).status).toBe(200)
      const restored = yield* settled(5)
      expect(restored.pending_facts).toBe(0)
      const again = yield* list("&type=note")
      expect(again).toHaveLength(1)
      expect([...again[0].source_ids].sort()).toEqual([a, b].sort())
      void status
    }))

  it.effect("the agent's own records become experiences; a subject with enough notes gets a summary", () =>
    Effect.gen(function*() {
      const { list, record, settled } = yield* setup
      yield* record("Deployed the billing service to staging and ran the migration checks.", "2024-05-01T10:00:00Z", { agent_id: "ops-bot" })
      yield* record("The billing service migration checks failed on staging, so the deploy was rolled back.", "2024-05-02T10:00:00Z", { agent_id: "ops-bot" })
      const topics = [
        ["sourdough bread", "baked a sourdough bread loaf with rye flour", "the sourdough bread loaf came out with a crisp crust"],
        ["marathon training", "started marathon training with long Sunday runs", "marathon training reached thirty kilometres"],
        ["balcony tomatoes", "planted balcony tomatoes in big clay pots", "the balcony tomatoes ripened in the big clay pots"]
      ] as const
      let day = 1
      for (const [, first, second] of topics) {
        yield* record(`Nina: I ${first}.`, `2024-07-${String(day++).padStart(2, "0")}T10:00:00Z`)
        yield* record(`Nina: ${second[0]!.toUpperCase()}${second.slice(1)}.`, `2024-07-${String(day++).padStart(2, "0")}T10:00:00Z`)
      }
      yield* settled()
      const experiences = yield* list("&type=experience")
      expect(experiences).toHaveLength(1)
      expect(experiences[0].agent_id).toBe("ops-bot")
      expect(experiences[0].text).toContain("rolled back")
      const notes = yield* list("&type=note")
      expect(notes).toHaveLength(3)
      const summaries = yield* list("&type=summary")
      const nina = summaries.find((s) => s.metadata.summary_of === "Nina")
      expect(nina).toBeDefined()
      expect([...nina.source_ids].sort()).toEqual(notes.map((n) => n.id).sort())
      for (const [topic] of topics) expect(nina.text.toLowerCase()).toContain(topic)
    }))
})

eachProfile("consolidation status across organizations", (it) => {
  it.effect("another organization's space is 403 forbidden; a missing one 404 not_found", () =>
    Effect.gen(function*() {
      const { record, spaceId } = yield* setup
      yield* record("Zara: I signed up for a pottery class.", "2024-03-04T18:00:00Z")
      const stranger = (yield* createKey((yield* signup("stranger")).token)).raw_key
      const theirs = yield* call("GET", `/v1/spaces/${spaceId}/consolidation`, { token: stranger })
      expect(theirs.status).toBe(403)
      expect(theirs.body.error.code).toBe("forbidden")
      const missing = yield* call("GET", `/v1/spaces/none-${Date.now()}/consolidation`, { token: stranger })
      expect(missing.status).toBe(404)
      expect(missing.body.error.code).toBe("not_found")
    }))
})

eachProfile("consolidation switched off", (it) => {
  it.effect("CONSOLIDATION=off leaves facts as they are, and says so", () =>
    Effect.gen(function*() {
      const { list, record, status } = yield* setup
      yield* record("Zara: I signed up for a pottery class at the Riverside studio on Mondays.", "2024-03-04T18:00:00Z")
      yield* record("Zara: My pottery teacher at the Riverside studio says my bowls are getting better.", "2024-04-15T18:00:00Z")
      yield* Effect.sleep("2500 millis")
      expect(yield* status).toMatchObject({ enabled: false, pending_facts: 2, runs: [] })
      expect((yield* list()).every((m) => m.type === "fact")).toBe(true)
    }))
}, { consolidation: false })
