/**
 * insertDocuments, and consolidation's insert, rewrite and settle, answer the
 * memories they stored without reading their rows back: what they answer
 * must be exactly what the store holds, as loading the space reads it (the
 * index of a node that restarts is built from the rows). Metadata comes back
 * from jsonb with its keys reordered; nested objects, arrays and numbers too.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { ConsolidationRepo, type Synthesis } from "../../services/store/ConsolidationRepo.ts"
import { MemoryRepo, type PageCursor } from "../../services/store/MemoryRepo.ts"
import { applySourceDiff } from "../../services/store/SourceDiff.ts"
import { asJsonb, newMemoryId } from "../../services/store/MemoryRows.ts"
import { MemoryId, OrgId, SpaceId } from "../../src/domain/Ids.ts"
import { call, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const METADATA = [
  {},
  { zebra: 1, a: 2, mm: [3, { yy: true, b: null }], "é": "accent", "日本": "two characters, six bytes", ab: { c: { ba: 1, a: 0 } } },
  { big: 1e21, small: 1e-7, third: 0.1 + 0.2, negative: -12.5, integer: 9007199254740991, list: ["b", "a", 2, 1] }
]

/** A space of a new account's own, created through the API, as the repositories address it. */
const newSpace = (prefix: string) =>
  Effect.gen(function*() {
    const owner = yield* signup()
    const spaceId = `${prefix}-${Date.now()}`
    expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: spaceId } })).status).toBe(201)
    return { orgId: OrgId.make(owner.orgId), spaceId: SpaceId.make(spaceId) }
  })

eachProfile("memories as stored", (it) => {
  it.effect("what insertDocuments answers equals the rows the space loads, metadata in jsonb's order included", () =>
    Effect.gen(function*() {
      const space = yield* newSpace("inserted")
      const repo = yield* MemoryRepo
      const embedder = yield* Embedder
      const texts = ["Maya booked the corner table for Friday.", "Jon prefers the quiet room upstairs.", "Zoë paid in advance: 12 € \"cash\"\n☕️"]
      const vectors = yield* embedder.embed(texts)
      const at = new Date(Date.UTC(2026, 10, 27, 9, 30, 15, 123))
      const answered = yield* repo.transaction(repo.insertDocuments(space, texts.map((text, i) => ({
        document: { documentId: `doc_inserted_${i}`, source: "memory" as const, textLength: text.length, tags: ["t"] },
        memories: [{
          id: newMemoryId(`inserted${i}`),
          text,
          sourceText: `Speaker: ${text}`,
          context: i === 0 ? "" : "a booking",
          type: i === 2 ? "experience" as const : "fact" as const,
          state: i === 1 ? "question" as const : "active" as const,
          entities: i === 2 ? [] : [{ name: text.split(" ")[0]!, kind: "person" }, { name: "Friday", kind: "thing" }],
          metadata: METADATA[i]!,
          tags: i === 1 ? ["b", "a"] : [],
          userId: i === 0 ? "user-1" : null,
          agentId: i === 1 ? "agent-1" : null,
          sessionId: null,
          memberId: null,
          eventTime: new Date(Date.UTC(2024, 4, 7, 12, 0, 0, 7 + i)),
          occurredStart: i === 1 ? new Date(Date.UTC(2024, 4, 6)) : null,
          occurredEnd: i === 1 ? new Date(Date.UTC(2024, 4, 6, 23, 59, 59, 999)) : null,
          embedding: i === 2 ? null : vectors[i]!,
          embedder: i === 2 ? null : embedder.id
        }]
      })), 40, at))
      const loaded = yield* repo.loadSpace(space)
      expect(answered.memories).toHaveLength(3)
      expect(answered.memories).toEqual(loaded)
      // toEqual ignores key order; the wire does not: both must serialize alike.
      expect(JSON.stringify(answered.memories)).toBe(JSON.stringify(loaded))
      expect(answered.memories.map((m) => m.position)).toEqual([40, 41, 42])
      expect(Object.keys(answered.memories[1]!.metadata)).toEqual(["a", "ab", "mm", "é", "zebra", "日本"])

      // The texts a space woken from its snapshot reads back, a page at a time, are the same texts.
      const pages: Array<{ id: string; text: string; sourceText: string; context: string; metadata: unknown }> = []
      let after: PageCursor | null = null
      for (;;) {
        const page: Effect.Effect.Success<ReturnType<typeof repo.textPage>> = yield* repo.textPage(space, after, 2)
        for (const row of page.texts) {
          const sourceText = row.source_diff === null ? row.source_text : applySourceDiff(row.text, row.source_diff)
          pages.push({ id: row.id, text: row.text, sourceText, context: row.context, metadata: row.metadata })
        }
        if (page.texts.length < 2 || page.next === null) break
        after = page.next
      }
      const whole = loaded.map((m) => ({ id: m.id, text: m.text, sourceText: m.sourceText, context: m.context, metadata: m.metadata }))
      expect(JSON.stringify(pages)).toBe(JSON.stringify(whole))
    }).pipe(Effect.provide(MemoryRepo.Default)))

  it.effect("what consolidation's insert, rewrite and settle answer equals the rows the space loads", () =>
    Effect.gen(function*() {
      const space = yield* newSpace("consolidated")
      const repo = yield* MemoryRepo
      const consolidation = yield* ConsolidationRepo
      const embedder = yield* Embedder
      const facts = ["Maya moved to Porto in May.", "Maya now lives in Lisbon.", "Jon plays the cello."]
      const factVectors = yield* embedder.embed(facts)
      const at = new Date(Date.UTC(2026, 10, 27, 9, 30, 15, 123))
      yield* repo.transaction(repo.insertDocuments(space, facts.map((text, i) => ({
        document: { documentId: `doc_fact_${i}`, source: "memory" as const, textLength: text.length, tags: [] },
        memories: [{
          id: newMemoryId(`fact${i}`),
          text,
          sourceText: text,
          context: "",
          type: "fact" as const,
          state: "active" as const,
          entities: [{ name: text.split(" ")[0]!, kind: "person" }],
          metadata: {},
          tags: [],
          userId: "user-1",
          agentId: null,
          sessionId: null,
          memberId: null,
          eventTime: new Date(Date.UTC(2024, 4, 7 + i)),
          occurredStart: null,
          occurredEnd: null,
          embedding: factVectors[i]!,
          embedder: embedder.id
        }]
      })), 0, at))
      const [porto, lisbon, cello] = facts.map((_, i) => MemoryId.make(`mem_fact${i}`))
      const texts = ["Maya: lived in Porto, now in Lisbon.", "Maya: a summary of where she lived.", "Maya: moved from Porto to Lisbon in 2024."]
      const vectors = yield* embedder.embed(texts)
      const synthesis = (i: number, id: string, sources: ReadonlyArray<MemoryId>): Synthesis => ({
        id: MemoryId.make(id),
        type: i === 1 ? "summary" : "note",
        text: texts[i]!,
        entities: [{ name: "Maya", kind: "person" }, { name: "Lisbon", kind: "place" }],
        metadata: METADATA[1 + (i % 2)]!,
        tags: i === 1 ? [] : ["b", "a"],
        userId: "user-1",
        agentId: i === 1 ? "agent-1" : null,
        eventTime: new Date(Date.UTC(2024, 4, 8, 10, 0, 0, 321 + i)),
        occurredStart: i === 0 ? new Date(Date.UTC(2024, 4, 1)) : null,
        occurredEnd: i === 0 ? new Date(Date.UTC(2024, 4, 31, 23, 59, 59, 999)) : null,
        sourceIds: sources,
        embedding: i === 1 ? null : vectors[i]!,
        embedder: i === 1 ? null : embedder.id
      })
      const byId = <A extends { readonly id: string }>(rows: ReadonlyArray<A>) => new Map(rows.map((row) => [row.id, row]))

      const created = yield* repo.transaction(consolidation.insert(space, [synthesis(0, "mem_note1", [porto, lisbon]), synthesis(1, "mem_summary1", [])], 3, at))
      const afterInsert = byId(yield* repo.loadSpace(space))
      expect(created.map((m) => m.position)).toEqual([3, 4])
      for (const memory of created) {
        expect(memory).toEqual(afterInsert.get(memory.id))
        expect(JSON.stringify(memory)).toBe(JSON.stringify(afterInsert.get(memory.id)))
      }

      const later = new Date(at.getTime() + 60_000)
      const before = afterInsert.get(MemoryId.make("mem_note1"))!
      const rewritten = yield* repo.transaction(consolidation.rewrite(space, [{ before, after: synthesis(2, "mem_note1", [porto, lisbon, cello]) }], later))
      const afterRewrite = byId(yield* repo.loadSpace(space))
      expect(rewritten).toHaveLength(1)
      expect(rewritten[0]!.text).toBe(texts[2])
      expect(rewritten[0]).toEqual(afterRewrite.get(MemoryId.make("mem_note1")))
      expect(JSON.stringify(rewritten[0])).toBe(JSON.stringify(afterRewrite.get(MemoryId.make("mem_note1"))))

      const settled = yield* repo.transaction(consolidation.settle(space, [porto, lisbon], [{ fact: porto, by: lisbon }], later))
      const afterSettle = byId(yield* repo.loadSpace(space))
      expect(settled.map((fact) => fact.id).sort()).toEqual([porto, lisbon].sort())
      for (const fact of settled) {
        const row = afterSettle.get(fact.id)!
        expect({ ...afterRewrite.get(fact.id)!, consolidatedAt: fact.consolidatedAt, supersededBy: fact.supersededBy }).toEqual(row)
        expect(row.consolidatedAt).toEqual(later)
      }
      expect(afterSettle.get(porto)!.supersededBy).toBe(lisbon)
      expect(afterSettle.get(lisbon)!.supersededBy).toBeNull()
    }).pipe(Effect.provide([MemoryRepo.Default, ConsolidationRepo.Default])))
})

it("jsonb's key order: by length in UTF-8 bytes, then byte by byte, at every depth", () => {
  expect(JSON.stringify(asJsonb({ bb: 1, a: { zz: 1, y: [{ d: 1, cc: 2, c: 3 }] }, "é": 2, b: 0 }))).toBe(
    JSON.stringify({ a: { y: [{ c: 3, d: 1, cc: 2 }], zz: 1 }, b: 0, bb: 1, "é": 2 })
  )
})
