/**
 * insertDocuments answers the memories it stored without reading their rows
 * back: what it answers must be exactly what the store holds, as loading the
 * space reads it (the index of a node that restarts is built from the rows).
 * Metadata comes back from jsonb with its keys reordered; nested objects,
 * arrays and numbers too.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { asJsonb, newMemoryId } from "../../services/store/MemoryRows.ts"
import { OrgId, SpaceId } from "../../src/domain/Ids.ts"
import { call, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const METADATA = [
  {},
  { zebra: 1, a: 2, mm: [3, { yy: true, b: null }], "é": "accent", "日本": "two characters, six bytes", ab: { c: { ba: 1, a: 0 } } },
  { big: 1e21, small: 1e-7, third: 0.1 + 0.2, negative: -12.5, integer: 9007199254740991, list: ["b", "a", 2, 1] }
]

eachProfile("memories as stored", (it) => {
  it.effect("what insertDocuments answers equals the rows the space loads, metadata in jsonb's order included", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const spaceId = `inserted-${Date.now()}`
      expect((yield* call("POST", "/v1/spaces", { token: owner.token, json: { space_id: spaceId } })).status).toBe(201)
      const space = { orgId: OrgId.make(owner.orgId), spaceId: SpaceId.make(spaceId) }
      const repo = yield* MemoryRepo
      const embedder = yield* Embedder
      const texts = ["Maya booked the corner table for Friday.", "Jon prefers the quiet room upstairs.", "Ines paid in advance."]
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
    }).pipe(Effect.provide(MemoryRepo.Default)))
})

it("jsonb's key order: by length in UTF-8 bytes, then byte by byte, at every depth", () => {
  expect(JSON.stringify(asJsonb({ bb: 1, a: { zz: 1, y: [{ d: 1, cc: 2, c: 3 }] }, "é": 2, b: 0 }))).toBe(
    JSON.stringify({ a: { y: [{ c: 3, d: 1, cc: 2 }], zz: 1 }, b: 0, bb: 1, "é": 2 })
  )
})
