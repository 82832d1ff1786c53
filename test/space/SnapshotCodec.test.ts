/**
 * The index snapshot read back is the index it was taken of: every memory's
 * columns, every index entry, and every ranking; a snapshot that does not
 * read back whole is refused.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { MemoryId, OrgId, SpaceId } from "../../src/domain/Ids.ts"
import type { IndexedMemory } from "../../src/domain/Memory.ts"
import { BadBytes } from "../../src/space/Binary.ts"
import { decodeBody, encodeBody, pack, SNAPSHOT_FORMAT, unpack } from "../../src/space/SnapshotCodec.ts"
import { type IndexEmbedder, SpaceState } from "../../src/space/SpaceState.ts"
import { inSlices } from "../../src/space/IndexSnapshots.ts"
import { startWakeThread, type WakeThread } from "../../src/retrieval/WakeThread.ts"

const space = { orgId: OrgId.make("org_snap"), spaceId: SpaceId.make("snap") }

/** Each word's part of a text's vector (as GloVe's SIF parts are): deterministic, made up. */
const wordPart = (word: string) => {
  if (word.length < 2) return undefined
  const vector = new Float32Array(8)
  vector[word.length % 8] = 1
  vector[word.charCodeAt(0) % 8]! += 0.5
  return { weight: 1 + word.charCodeAt(1) / 100, vector }
}
/** A text's vector from its words' parts, as an embedder with parts answers. */
const fromWords = (words: ReadonlyArray<string>) => {
  const vector = new Float32Array(8)
  for (const word of words) {
    const part = wordPart(word)
    if (part) for (let d = 0; d < 8; d++) vector[d]! += part.weight * part.vector[d]!
  }
  const norm = Math.hypot(...vector) || 1
  return vector.map((x) => x / norm)
}
const derived: IndexEmbedder = { id: "words-8", dimensions: 8, wordPart }
const stored: IndexEmbedder = { id: "stored-8", dimensions: 8 }

const TEXTS = [
  "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
  "Melanie: Painting a lake at sunrise last week calmed me down.",
  "Caroline: Where does Marco live now?",
  "Jon lost his job as a banker and opened a dance studio in May 2023.",
  "Gina's clothing store opened in the city last June.",
  "Nate's turtles are three years old now.",
  "Joanna finished her screenplay about a turtle who loves jazz."
]

const memories = (embedder: IndexEmbedder): Array<IndexedMemory> =>
  // Enough memories that a restore makes their vectors in several batches.
  Array.from({ length: 1200 }, (_, i): IndexedMemory => {
    // Every seventh memory only asks ("Where does Marco live now?"), which ranks it lower.
    const text = i % TEXTS.length === 2 ? TEXTS[2]! : `${TEXTS[i % TEXTS.length]!} (note ${i})`
    const at = new Date(Date.UTC(2023, i % 12, 1 + (i % 27), 10, i))
    return {
      id: MemoryId.make(`mem_${i}`),
      orgId: space.orgId,
      spaceId: space.spaceId,
      documentId: `doc_${Math.floor(i / 3)}`,
      text,
      sourceText: i % 4 === 0 ? text : `I said: ${text}`,
      context: i % 5 === 0 ? "from the chat" : "",
      type: i % 11 === 0 ? "note" : "fact",
      // Some that only ask are kept as questions (every state reads back as written).
      state: i % 9 === 0 ? "retired" : i % TEXTS.length === 2 && i % 3 === 0 ? "question" : "active",
      entities: i % 2 === 0 ? [{ name: "Caroline", kind: "person" }, { name: "Lisbon", kind: "place" }] : [],
      // A note speaks for its facts' subject.
      metadata: i % 11 === 0 ? { subject: "Melanie" } : i % 3 === 0 ? { dia_id: `D1:${i}` } : {},
      tags: i % 4 === 1 ? ["work", "2023"] : [],
      userId: i % 6 === 0 ? "user-1" : null,
      agentId: i % 7 === 0 ? "agent-9" : null,
      // Even positions of one session are two apart: each other's neighbours.
      sessionId: i % 2 === 0 ? `session-${Math.floor(i / 10)}` : null,
      memberId: null,
      eventTime: at,
      occurredStart: i % 5 === 2 ? new Date(at.getTime() - 86_400_000) : null,
      occurredEnd: i % 5 === 2 ? at : null,
      sourceIds: i % 11 === 0 && i > 0 ? [MemoryId.make(`mem_${i - 1}`), MemoryId.make(`mem_${i - 2}`)] : [],
      position: i,
      consolidatedAt: i % 3 === 2 ? at : null,
      supersededBy: i % 13 === 5 ? MemoryId.make(`mem_${i + 1}`) : null,
      createdAt: at,
      updatedAt: new Date(at.getTime() + i),
      embedding: embedder.wordPart ? null : Buffer.from(fromWords([text, String(i)]).buffer),
      embedder: embedder.id
    }
  })

const stateOf = (embedder: IndexEmbedder, list: ReadonlyArray<IndexedMemory>) => {
  const state = new SpaceState(space, embedder)
  for (const memory of list) state.put(memory)
  // Churn: some memories leave, some come back with other words, so the slots have holes.
  for (const memory of list.filter((_, i) => i % 8 === 3)) state.remove(memory.id)
  for (const memory of list.filter((_, i) => i % 10 === 4)) state.put({ ...memory, text: `${memory.text} changed`, updatedAt: new Date() })
  return state
}

/** Runs a decode without a vector thread: it never waits on one. */
const run = <A>(steps: Generator<void | Promise<void>, A>) => {
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
    if (next.value !== undefined) throw new Error("a decode without a thread waited on one")
  }
}

/** The state read back from a snapshot of `state`; with `thread`, its postings and most vectors built there. */
const roundTrip = (state: SpaceState, embedder: IndexEmbedder, thread?: WakeThread) =>
  Effect.gen(function*() {
    const { body, memories: count } = run(encodeBody(state, embedder.wordPart !== undefined))
    const file = yield* pack({ orgId: space.orgId, spaceId: space.spaceId, storeVersion: 7, embedder: embedder.id, derived: embedder.wordPart !== undefined, memories: count }, body)
    const unpacked = yield* unpack(file)
    const back = new SpaceState(space, embedder)
    if (thread === undefined) run(decodeBody(unpacked.body, back, unpacked.header))
    else yield* inSlices(decodeBody(unpacked.body, back, unpacked.header, thread)).pipe(Effect.ensuring(Effect.sync(() => thread.stop())))
    return { back, file, unpacked }
  })

/** `back` is `state` in every column and index entry, and ranks as it does, before and after the same changes. */
const expectSame = (state: SpaceState, back: SpaceState, list: ReadonlyArray<IndexedMemory>) => {
  expect(back.size).toBe(state.size)
  expect(back.complete).toBe(false)
  // Without their texts the memories are known, in every column.
  for (const meta of state.metas()) expect(back.meta(meta.id)).toEqual(meta)
  // And so is every index entry: words, vector, entities, event time, group, position, flags.
  for (const meta of state.metas()) {
    expect(back.index.placedAt(back.index.slot(meta.id)!)).toEqual(state.index.placedAt(state.index.slot(meta.id)!))
  }
  // Who said each memory is among them: a "Name: " turn's speaker, a note's subject, else the user's id.
  const speakers = new Set([...state.metas()].map((meta) => back.index.placedAt(back.index.slot(meta.id)!)!.speaker))
  expect(speakers).toEqual(new Set(["caroline", "melanie", "user-1", null]))
  // And which of them end with a question (the turn after may answer it).
  const asking = [...state.metas()].filter((meta) => back.index.placedAt(back.index.slot(meta.id)!)!.endsAsking).map((meta) => meta.id)
  expect(asking.length).toBeGreaterThan(0)
  expect(asking.every((id) => state.get(id)!.text.endsWith("?"))).toBe(true)
  // Each document's memories, which a change replacing the document takes with it.
  const documents = [...new Set(list.map((m) => m.documentId))]
  const membersOf = (target: SpaceState) => documents.map((d) => [...target.ofDocument(d)].sort())
  expect(membersOf(back)).toEqual(membersOf(state))
  expect(membersOf(back).filter((members) => members.length > 1).length).toBeGreaterThan(100)
  // Texts come from the store afterwards.
  for (const id of back.missingTexts()) back.fillText(id, state.get(id)!)
  expect(back.complete).toBe(true)
  for (const memory of state.all()) expect(back.get(memory.id)).toEqual(memory)
  // And it goes on as the original does: the same changes leave both answering the same.
  for (const target of [state, back]) {
    for (const memory of list.filter((_, i) => i % 9 === 2)) target.remove(memory.id)
    for (const memory of list.filter((_, i) => i % 7 === 1)) target.put({ ...memory, id: MemoryId.make(`${memory.id}_again`), text: `${memory.text} again`, position: memory.position + 1000 })
  }
  expect(membersOf(back)).toEqual(membersOf(state))
  for (const query of ["Where does Marco live now?", "support group", "turtles jazz screenplay", "What did Melanie paint in 2023?", "banker dance"]) {
    for (const mode of ["fast", "accurate"] as const) {
      const recall = {
        query, queryTime: null, mode, limit: 10, full: false, minScore: null, tags: null, tagsMatch: "any" as const,
        userId: null, agentId: null, sessionId: null, memoryTypes: null, asOf: null, preferObservations: false
      }
      const vector = fromWords(query.toLowerCase().split(" "))
      const now = Date.parse("2026-11-29T12:00:00Z")
      const expected = state.rank(recall, vector, mode, 20, now)
      expect(expected.length).toBeGreaterThan(0)
      expect(back.rank(recall, vector, mode, 20, now)).toEqual(expected)
    }
  }
}

const WAKE_WORKER = new URL("../../src/retrieval/wake-worker.mjs", import.meta.url)

describe("index snapshots", () => {
  for (const embedder of [derived, stored]) {
    it.effect(`read back the same memories and rankings (${embedder.wordPart ? "vectors made from words" : "vectors stored"})`, () =>
      Effect.gen(function*() {
        const list = memories(embedder)
        const state = stateOf(embedder, list)
        const { back, unpacked } = yield* roundTrip(state, embedder)
        expect(unpacked.header.storeVersion).toBe(7)
        expectSame(state, back, list)
      }))

    it.effect(`read back the same index when a thread builds its postings and most vectors (${embedder.wordPart ? "vectors made from words" : "vectors stored"})`, () =>
      Effect.gen(function*() {
        const list = memories(embedder)
        const state = stateOf(embedder, list)
        const { back } = yield* roundTrip(state, embedder, startWakeThread(WAKE_WORKER))
        expect(back.index.wakeThreadFailure).toBeUndefined()
        expectSame(state, back, list)
      }))
  }

  it.effect("wake the same index on the main thread when the thread dies, and say why", () =>
    Effect.gen(function*() {
      const list = memories(derived)
      const state = stateOf(derived, list)
      const { back } = yield* roundTrip(state, derived, startWakeThread(new URL("../support/crashing-wake-worker.mjs", import.meta.url)))
      expect(back.index.wakeThreadFailure).toMatch(/exited with code 3/)
      expectSame(state, back, list)
    }))

  it.effect("wake the same index on the main thread when the thread never answers", () =>
    Effect.gen(function*() {
      const list = memories(derived)
      const state = stateOf(derived, list)
      const { back } = yield* roundTrip(state, derived, startWakeThread(new URL("../support/silent-wake-worker.mjs", import.meta.url), 300))
      expect(back.index.wakeThreadFailure).toMatch(/no answer in 300 ms/)
      expectSame(state, back, list)
    }))

  it.effect("refuse a file cut short, a changed byte, or a body that does not read back whole", () =>
    Effect.gen(function*() {
      const state = stateOf(derived, memories(derived))
      const { file } = yield* roundTrip(state, derived)
      for (const cut of [0, 5, 20, file.length - 1]) {
        expect(Either.isLeft(yield* Effect.either(unpack(file.subarray(0, cut))))).toBe(true)
      }
      for (const at of [3, 30, Math.floor(file.length / 2), file.length - 1]) {
        const changed = Uint8Array.from(file)
        changed[at] = changed[at]! ^ 0x40
        expect(Either.isLeft(yield* Effect.either(unpack(changed)))).toBe(true)
      }
      // A body whose checksum holds but whose records do not: cut anywhere, it never reads back.
      const { body, memories: count } = run(encodeBody(state, true))
      const header = { format: SNAPSHOT_FORMAT, orgId: space.orgId, spaceId: space.spaceId, storeVersion: 1, embedder: derived.id, derived: true, memories: count, bodyBytes: body.length, bodySha256: "" }
      for (const cut of [1, Math.floor(body.length / 3), body.length - 1]) {
        expect(() => run(decodeBody(body.subarray(0, cut), new SpaceState(space, derived), header))).toThrow(BadBytes)
      }
      expect(() => run(decodeBody(body, new SpaceState(space, derived), { ...header, memories: count + 1 }))).toThrow(BadBytes)
    }))

  it.effect("hold no word of a removed memory: its words are placeholders, numbered as before, and the index reads back the same", () =>
    Effect.gen(function*() {
      const list = memories(derived)
      const secret = "zqsecretwordxv"
      const state = stateOf(derived, list)
      const planted = { ...list[0]!, id: MemoryId.make("mem_planted"), text: `Mina's locker code is ${secret}.`, position: 5000 }
      state.put(planted)
      const before = yield* roundTrip(state, derived)
      expect(before.back.index.lexicon.find(secret)).toBeDefined()
      state.remove(planted.id)
      const { back, unpacked } = yield* roundTrip(state, derived)
      // The body is deflated: read back, the word is nowhere in it, not even in its lexicon.
      expect(Buffer.from(unpacked.body).toString("latin1")).not.toContain(secret)
      expect(back.index.lexicon.find(secret)).toBeUndefined()
      expectSame(state, back, list)
    }))
})
