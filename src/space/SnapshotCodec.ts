/**
 * A space's index as bytes, and back. The file is a fixed magic, a JSON
 * header (what it is of, and the store version it reflects), then the body
 * compressed with deflate and checked by its SHA-256. The body holds the
 * space's words once, then each memory: what it is (type, state, scope,
 * tags, entities, times, sources, who said it) and its words as word numbers; a vector
 * only when the embedder cannot make it again from the words. No text: the
 * texts are read from the store after a wake. The space's words are those its
 * memories use now: a word no memory uses any more (one of an erased memory,
 * or only ever in a query) is written as a placeholder that keeps the word
 * numbers and holds nothing of it, so an erased text leaves the file at the
 * next snapshot. Anything that does not read
 * back exactly (a short file, a changed byte, another space's or another
 * embedder's, an older store version) is refused, and the index is rebuilt
 * from the store.
 */
import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { deflateRaw, inflateRaw } from "node:zlib"
import { Effect, Schema } from "effect"
import { MemoryId } from "../domain/Ids.ts"
import type { EntityRef } from "../domain/Memory.ts"
import { BadBytes, ByteReader, ByteWriter } from "./Binary.ts"
import { STATE_CODES, TYPE_CODES } from "./MemoryColumns.ts"
import { type SpaceState, timeGroupKey } from "./SpaceState.ts"
import type { WakeThread } from "../retrieval/WakeThread.ts"
import { wordNumbers } from "../retrieval/Lexicon.ts"

const MAGIC = Buffer.from("ENGRAMIX", "ascii")
export const SNAPSHOT_FORMAT = 6 as const

export const SnapshotHeader = Schema.Struct({
  format: Schema.Literal(SNAPSHOT_FORMAT),
  orgId: Schema.String,
  spaceId: Schema.String,
  /** The store's version of the space's memories when the snapshot was taken (space_versions). */
  storeVersion: Schema.Number,
  embedder: Schema.String,
  /** Vectors are made again from words (the embedder's `wordPart`), not stored. */
  derived: Schema.Boolean,
  memories: Schema.Number,
  bodyBytes: Schema.Number,
  bodySha256: Schema.String
})
export type SnapshotHeader = typeof SnapshotHeader.Type
const decodeHeader = Schema.decodeUnknownEither(Schema.parseJson(SnapshotHeader))

/** Records between two pauses of the encoder or decoder (the caller gives pending I/O a turn there). */
const SLICE = 1000

/** A memory's flags, a varint: its type (2 bits), its state (2 bits), then these. */
const KIND_BITS = 15
const ASKS = 1 << 4
const HAS_VECTOR = 1 << 5
const HAS_OCCURRED_START = 1 << 6
const HAS_OCCURRED_END = 1 << 7
const HAS_CONSOLIDATED = 1 << 8
const HAS_SPEAKER = 1 << 9
const ENDS_ASKING = 1 << 10

const ms = (date: Date) => date.getTime()

/**
 * The body of a snapshot of `state`, made in slices (the generator pauses
 * between them): the space's words, a table of its repeated strings, the
 * length of every memory's packed words, then those words (what its vector
 * is made from: a reader can start on the vectors before the rest), then
 * the memories in slot order, times as differences from the memory before
 * (or from the memory's own creation), then the stored vectors.
 */
export function* encodeBody(state: SpaceState, derived: boolean): Generator<void, { readonly body: Uint8Array; readonly memories: number }> {
  const strings = new Map<string, number>()
  const table: Array<string> = []
  const ref = (value: string) => {
    let at = strings.get(value)
    if (at === undefined) {
      at = table.length
      strings.set(value, at)
      table.push(value)
    }
    return at
  }
  const records = new ByteWriter()
  const lengths = new ByteWriter()
  const words = new ByteWriter()
  const vectors: Array<Float32Array> = []
  const optional = (value: string | null) => records.varint(value === null ? 0 : ref(value) + 1)
  let memories = 0
  let position = 0
  const lexiconSize = state.index.lexicon.size
  const used = new Uint8Array(lexiconSize + 1)
  let numbers: Int32Array = new Int32Array(256)
  let eventTime = 0
  let createdAt = 0
  for (const { embedder, meta, placed } of state.entries()) {
    records.string(meta.id)
    records.varint(ref(meta.documentId))
    const hasVector = !derived && placed.vector !== undefined
    records.varint(TYPE_CODES.indexOf(meta.type) | (STATE_CODES.indexOf(meta.state) << 2) | (placed.asks ? ASKS : 0) |
      (hasVector ? HAS_VECTOR : 0) | (meta.occurredStart !== null ? HAS_OCCURRED_START : 0) |
      (meta.occurredEnd !== null ? HAS_OCCURRED_END : 0) | (meta.consolidatedAt !== null ? HAS_CONSOLIDATED : 0) |
      (placed.speaker !== null ? HAS_SPEAKER : 0) | (placed.endsAsking ? ENDS_ASKING : 0))
    records.signed(meta.position - position)
    records.signed(ms(meta.eventTime) - eventTime)
    records.signed(ms(meta.createdAt) - createdAt)
    records.signed(ms(meta.updatedAt) - ms(meta.createdAt))
    if (meta.occurredStart !== null) records.signed(ms(meta.occurredStart) - ms(meta.eventTime))
    if (meta.occurredEnd !== null) records.signed(ms(meta.occurredEnd) - ms(meta.occurredStart ?? meta.eventTime))
    if (meta.consolidatedAt !== null) records.signed(ms(meta.consolidatedAt) - ms(meta.createdAt))
    position = meta.position
    eventTime = ms(meta.eventTime)
    createdAt = ms(meta.createdAt)
    for (const value of [meta.userId, meta.agentId, meta.sessionId, meta.memberId, meta.supersededBy, embedder]) optional(value)
    records.varint(meta.tags.length)
    for (const tag of meta.tags) records.varint(ref(tag))
    records.varint(meta.entities.length)
    for (const entity of meta.entities) {
      records.varint(ref(entity.name))
      records.varint(ref(entity.kind))
    }
    records.varint(meta.sourceIds.length)
    for (const source of meta.sourceIds) records.varint(ref(source))
    if (placed.speaker !== null) records.varint(ref(placed.speaker))
    lengths.varint(placed.words.length)
    words.raw(placed.words)
    const [count, out] = wordNumbers(placed.words, 0, placed.words.length, numbers, false)
    numbers = out
    for (let i = 0; i < count; i++) used[out[i]!] = 1
    if (hasVector) vectors.push(placed.vector!)
    if (++memories % SLICE === 0) yield
  }
  const out = new ByteWriter()
  const lexicon = state.index.lexicon.allWords()
  out.varint(lexicon.length)
  // Word number n is lexicon[n - 1]; one no memory uses is a placeholder no text can make (words never hold NUL).
  // A used word's bare form ("gina" of "gina's") is the lexicon's too, numbered when the word was: kept with it.
  for (let n = 1; n <= lexiconSize; n++) if (used[n] === 1) used[state.index.lexicon.softWord(n)] = 1
  for (let n = 1; n <= lexicon.length; n++) out.string(n <= lexiconSize && used[n] === 1 ? lexicon[n - 1]! : `\u0000${n}`)
  out.varint(table.length)
  for (const value of table) out.string(value)
  out.varint(memories)
  out.bytes(lengths.result())
  out.bytes(words.result())
  out.bytes(records.result())
  out.varint(vectors.length)
  for (const vector of vectors) out.float32s(vector)
  return { body: out.result(), memories }
}

/** One interned value per distinct key: a snapshot's many memories share their few lists. */
const sharing = <A>() => {
  const known = new Map<string, A>()
  return (key: string, make: () => A) => {
    let value = known.get(key)
    if (value === undefined) known.set(key, (value = make()))
    return value
  }
}

/**
 * Reads a body into `state` (empty, made with the same embedder), in
 * slices, then fills the state in bulk, in slices too (SpaceState.bulkRestore). Throws
 * BadBytes when the body does not read back whole.
 */
export function* decodeBody(
  body: Uint8Array,
  state: SpaceState,
  header: SnapshotHeader,
  /** Builds the postings and vectors while the rest is read (a large space). */
  thread?: WakeThread
): Generator<void | Promise<void>, number> {
  const read = new ByteReader(body)
  const lexicon = state.index.lexicon
  const wordCount = read.varint()
  for (let i = 1; i <= wordCount; i++) {
    if (lexicon.idOf(read.string()) !== i) throw new BadBytes(`word ${i} is listed twice`)
    if (i % (SLICE * 8) === 0) yield
  }
  yield
  const table: Array<string> = Array.from({ length: read.varint() }, () => read.string())
  yield
  const count = read.varint()
  if (count !== header.memories) throw new BadBytes(`${count} memories where the header says ${header.memories}`)
  const lengths = new ByteReader(read.bytes())
  const wordBytes = read.bytes()
  const wordEnds = new Int32Array(count)
  for (let n = 0, wordsAt = 0; n < count; n++) {
    wordsAt += lengths.varint()
    if (wordsAt > wordBytes.length) throw new BadBytes(`memory ${n}'s words run past the words`)
    wordEnds[n] = wordsAt
    if ((n + 1) % (SLICE * 16) === 0) yield
  }
  if (!lengths.done) throw new BadBytes("word lengths left after the last memory")
  if ((count === 0 ? 0 : wordEnds[count - 1]!) !== wordBytes.length) throw new BadBytes("words left after the last memory")
  // Every word number must be the lexicon's.
  let value = 0
  let scale = 1
  for (let i = 0; i < wordBytes.length; i++) {
    if (i % (SLICE * 1024) === SLICE * 1024 - 1) yield
    const byte = wordBytes[i]!
    value += (byte & 0x7f) * scale
    if (byte & 0x80) {
      scale *= 0x80
      continue
    }
    if (value > wordCount) throw new BadBytes(`word number ${value} of ${wordCount}`)
    value = 0
    scale = 1
  }
  yield
  // The postings and vectors are built on the thread, from the words alone, while the rest is read here.
  const partsAhead = thread === undefined ? undefined : yield* state.index.buildAhead(thread, wordBytes, wordEnds)
  const records = new ByteReader(read.bytes())
  const vectorCount = read.varint()
  const dims = state.embedder.dimensions
  const at = () => table[records.below(table.length)]!
  const optional = () => {
    const value = records.below(table.length + 1)
    return value === 0 ? null : table[value - 1]!
  }
  const ids: Array<MemoryId> = new Array(count)
  const documentIds: Array<string> = new Array(count)
  const kinds = new Uint8Array(count)
  const entities: Array<ReadonlyArray<EntityRef>> = new Array(count)
  const lowered: Array<ReadonlyArray<string>> = new Array(count)
  const tags: Array<ReadonlyArray<string>> = new Array(count)
  const scopes = [new Array<string | null>(count), new Array<string | null>(count), new Array<string | null>(count), new Array<string | null>(count)]
  const sourceIds: Array<ReadonlyArray<MemoryId>> = new Array(count)
  const supersededBy: Array<MemoryId | null> = new Array(count)
  const embedders: Array<string | null> = new Array(count)
  const positions = new Int32Array(count)
  const times = Array.from({ length: 6 }, () => new Float64Array(count).fill(Number.NaN))
  const [eventTimes, occurredStarts, occurredEnds, consolidatedAts, createdAts, updatedAts] = times as [
    Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array
  ]
  const indexTimes = new Float64Array(count)
  const groups = new Int32Array(count)
  const groupKeys: Array<string> = []
  const groupOfSession = new Map<string, number>()
  const groupOfTime = new Map<number, number>()
  const hasVector = new Uint8Array(count)
  const vectors = vectorCount > 0 ? new Float32Array(count * dims) : undefined
  const flags = {
    active: new Uint8Array(count), superseded: new Uint8Array(count), asks: new Uint8Array(count), endsAsking: new Uint8Array(count)
  }
  const speakers: Array<string | null> = new Array(count)
  const entityRef = sharing<EntityRef>()
  const entityList = sharing<ReadonlyArray<EntityRef>>()
  const loweredList = sharing<ReadonlyArray<string>>()
  const tagList = sharing<ReadonlyArray<string>>()
  const EMPTY: ReadonlyArray<never> = []
  let position = 0
  let eventTime = 0
  let createdAt = 0
  let vectorsRead = 0
  const vectorReader = read
  for (let n = 0; n < count; n++) {
    // Listed twice: found once the index has them all (its map of ids comes out short), without a set of its own.
    const id = MemoryId.make(records.string())
    ids[n] = id
    documentIds[n] = at()
    const flag = records.varint()
    kinds[n] = flag & KIND_BITS
    position += records.signed()
    eventTime += records.signed()
    createdAt += records.signed()
    positions[n] = position
    eventTimes[n] = eventTime
    createdAts[n] = createdAt
    updatedAts[n] = createdAt + records.signed()
    if (flag & HAS_OCCURRED_START) occurredStarts[n] = eventTime + records.signed()
    if (flag & HAS_OCCURRED_END) occurredEnds[n] = (flag & HAS_OCCURRED_START ? occurredStarts[n]! : eventTime) + records.signed()
    if (flag & HAS_CONSOLIDATED) consolidatedAts[n] = createdAt + records.signed()
    for (const scope of scopes) scope[n] = optional()
    const superseding = optional()
    supersededBy[n] = superseding === null ? null : MemoryId.make(superseding)
    embedders[n] = optional()
    const tagCount = records.varint()
    if (tagCount === 0) tags[n] = EMPTY
    else {
      const refs = Array.from({ length: tagCount }, () => records.below(table.length))
      tags[n] = tagList(refs.join(","), () => refs.map((r) => table[r]!))
    }
    const entityCount = records.varint()
    if (entityCount === 0) {
      entities[n] = EMPTY
      lowered[n] = EMPTY
    } else {
      const refs = Array.from({ length: entityCount * 2 }, () => records.below(table.length))
      const key = refs.join(",")
      const list = entityList(key, () => {
        const out: Array<EntityRef> = []
        for (let k = 0; k < refs.length; k += 2) out.push(entityRef(`${refs[k]},${refs[k + 1]}`, () => ({ name: table[refs[k]!]!, kind: table[refs[k + 1]!]! })))
        return out
      })
      entities[n] = list
      lowered[n] = loweredList(key, () => [...new Set(list.map((e) => e.name.toLowerCase()))])
    }
    const sourceCount = records.varint()
    sourceIds[n] = sourceCount === 0 ? EMPTY : Array.from({ length: sourceCount }, () => MemoryId.make(at()))
    speakers[n] = flag & HAS_SPEAKER ? at() : null
    if (flag & HAS_VECTOR) {
      if (vectors === undefined || vectorsRead >= vectorCount) throw new BadBytes(`memory ${id} has a vector the body lacks`)
      const vector = vectorReader.float32s()
      if (vector.length !== dims) throw new BadBytes(`memory ${id}'s vector has ${vector.length} dimensions, not ${dims}`)
      vectors.set(vector, n * dims)
      hasVector[n] = 1
      vectorsRead++
    }
    // What the index keeps that the memory's columns decide (as SpaceState.toDoc decides it).
    indexTimes[n] = Number.isNaN(occurredStarts[n]!) ? eventTime : occurredStarts[n]!
    const session = scopes[2]![n]!
    if (sourceCount > 0) groups[n] = -1
    else if (session !== null) {
      let group = groupOfSession.get(session)
      if (group === undefined) groupOfSession.set(session, (group = groupKeys.push(`s:${session}`) - 1))
      groups[n] = group
    } else {
      let group = groupOfTime.get(eventTime)
      if (group === undefined) groupOfTime.set(eventTime, (group = groupKeys.push(timeGroupKey(eventTime)) - 1))
      groups[n] = group
    }
    flags.active[n] = ((flag >> 2) & 3) === 0 ? 1 : 0
    flags.superseded[n] = supersededBy[n] === null ? 0 : 1
    flags.asks[n] = flag & ASKS ? 1 : 0
    flags.endsAsking[n] = flag & ENDS_ASKING ? 1 : 0
    if ((n + 1) % SLICE === 0) yield
  }
  if (!records.done) throw new BadBytes("bytes left after the last memory")
  if (vectorsRead !== vectorCount || !read.done) throw new BadBytes("bytes left after the last vector")
  yield
  yield* state.bulkRestore(
    {
      ids, words: wordBytes, wordEnds, vectors, hasVector, dims, entities: lowered, eventTimes: indexTimes, groups, groupKeys,
      positions, active: flags.active, superseded: flags.superseded, asks: flags.asks, endsAsking: flags.endsAsking, speakers
    },
    {
      ids, documentIds, kinds, entities, tags, userIds: scopes[0]!, agentIds: scopes[1]!, sessionIds: scopes[2]!, memberIds: scopes[3]!,
      sourceIds, supersededBy, embedders, positions, eventTimes, occurredStarts, occurredEnds, consolidatedAts, createdAts, updatedAts
    },
    partsAhead
  )
  if (state.size !== count) throw new BadBytes(`${count - state.size} memories are listed twice`)
  return count
}

const deflate = promisify(deflateRaw)
const inflate = promisify(inflateRaw)
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** The file: magic, header length, header JSON, compressed body (compression runs off the event loop). */
export const pack = (header: Omit<SnapshotHeader, "bodyBytes" | "bodySha256" | "format">, body: Uint8Array) =>
  Effect.promise(() => deflate(body, { level: 6 })).pipe(
    Effect.map((compressed) => {
      const json = Buffer.from(JSON.stringify({ ...header, format: SNAPSHOT_FORMAT, bodyBytes: body.length, bodySha256: sha256(compressed) }))
      const length = Buffer.alloc(4)
      length.writeUInt32LE(json.length)
      return Buffer.concat([MAGIC, length, json, compressed])
    })
  )

/** The header and the uncompressed body of a file, or why it cannot be read. */
export const unpack = (file: Uint8Array) =>
  Effect.gen(function*() {
    const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength)
    if (bytes.length < 12 || !bytes.subarray(0, 8).equals(MAGIC)) return yield* Effect.fail("not a snapshot file")
    const length = bytes.readUInt32LE(8)
    if (12 + length > bytes.length) return yield* Effect.fail("header cut short")
    const header = decodeHeader(bytes.subarray(12, 12 + length).toString("utf8"))
    if (header._tag === "Left") return yield* Effect.fail(`unreadable header: ${header.left.message}`)
    const compressed = bytes.subarray(12 + length)
    if (sha256(compressed) !== header.right.bodySha256) return yield* Effect.fail("body checksum mismatch")
    const body = yield* Effect.tryPromise({ try: () => inflate(compressed), catch: (cause) => `body does not inflate: ${String(cause)}` })
    if (body.length !== header.right.bodyBytes) return yield* Effect.fail("body size mismatch")
    return { header: header.right, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) }
  })
