/**
 * A space's index as bytes, and back. The file is a fixed magic, a JSON
 * header (what it is of, and the store version it reflects), then the body
 * compressed with deflate and checked by its SHA-256. The body holds the
 * space's words once, then each memory: what it is (type, state, scope,
 * tags, entities, times, sources) and its words as word numbers; a vector
 * only when the embedder cannot make it again from the words. No text: the
 * texts are read from the store after a wake. Anything that does not read
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
import { forEachWord } from "../retrieval/Lexicon.ts"
import { BadBytes, ByteReader, ByteWriter } from "./Binary.ts"
import type { MemoryMeta } from "./MemoryColumns.ts"
import { groupKeyOf, type SnapshotEntry, type SpaceState } from "./SpaceState.ts"

const MAGIC = Buffer.from("ENGRAMIX", "ascii")
export const SNAPSHOT_FORMAT = 1

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

const TYPES = ["fact", "note", "experience", "summary"] as const
const STATES = ["active", "retired"] as const
/** Records between two pauses of the encoder or decoder (the caller gives pending I/O a turn there). */
const SLICE = 2000

const HAS_VECTOR = 1 << 3
const ASKS = 1 << 4
const HAS_OCCURRED_START = 1 << 5
const HAS_OCCURRED_END = 1 << 6
const HAS_CONSOLIDATED = 1 << 7

/** The body of a snapshot of `state`, made in slices (the generator pauses between them). */
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
  const optional = (value: string | null) => records.varint(value === null ? 0 : ref(value) + 1)
  let memories = 0
  for (const { embedder, meta, placed } of state.entries()) {
    records.string(meta.id)
    records.varint(ref(meta.documentId))
    const hasVector = !derived && placed.vector !== undefined
    records.byte(TYPES.indexOf(meta.type) | (STATES.indexOf(meta.state) << 2) | (hasVector ? HAS_VECTOR : 0) | (placed.asks ? ASKS : 0) |
      (meta.occurredStart !== null ? HAS_OCCURRED_START : 0) | (meta.occurredEnd !== null ? HAS_OCCURRED_END : 0) |
      (meta.consolidatedAt !== null ? HAS_CONSOLIDATED : 0))
    records.signed(meta.position)
    records.signed(meta.eventTime.getTime())
    records.signed(meta.createdAt.getTime())
    records.signed(meta.updatedAt.getTime())
    if (meta.occurredStart !== null) records.signed(meta.occurredStart.getTime())
    if (meta.occurredEnd !== null) records.signed(meta.occurredEnd.getTime())
    if (meta.consolidatedAt !== null) records.signed(meta.consolidatedAt.getTime())
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
    records.bytes(placed.words)
    if (hasVector) records.float32s(placed.vector!)
    if (++memories % SLICE === 0) yield
  }
  const out = new ByteWriter()
  const words = state.index.lexicon.allWords()
  out.varint(words.length)
  for (const word of words) out.string(word)
  out.varint(table.length)
  for (const value of table) out.string(value)
  out.varint(memories)
  const head = out.result()
  const body = new Uint8Array(head.length + records.length)
  body.set(head)
  body.set(records.result(), head.length)
  return { body, memories }
}

/**
 * Reads a body into `state` (empty, made with the same embedder), in slices.
 * Throws BadBytes when the body does not read back whole.
 */
export function* decodeBody(
  body: Uint8Array,
  state: SpaceState,
  header: SnapshotHeader
): Generator<void, number> {
  const read = new ByteReader(body)
  const lexicon = state.index.lexicon
  const wordCount = read.varint()
  for (let i = 1; i <= wordCount; i++) {
    if (lexicon.idOf(read.string()) !== i) throw new BadBytes(`word ${i} is listed twice`)
  }
  const table: Array<string> = Array.from({ length: read.varint() }, () => read.string())
  const at = () => table[read.below(table.length)]!
  const optional = () => {
    const value = read.below(table.length + 1)
    return value === 0 ? null : table[value - 1]!
  }
  const count = read.varint()
  if (count !== header.memories) throw new BadBytes(`${count} memories where the header says ${header.memories}`)
  // The packed words of all of them take less than the body does.
  state.reserve(count, body.length)
  const seen = new Set<string>()
  for (let n = 0; n < count; n++) {
    const id = MemoryId.make(read.string())
    if (seen.has(id)) throw new BadBytes(`memory ${id} is listed twice`)
    seen.add(id)
    const documentId = at()
    const flags = read.byte()
    const type = TYPES[flags & 3]!
    const stateIndex = (flags >> 2) & 1
    const position = read.signed()
    const eventTime = new Date(read.signed())
    const createdAt = new Date(read.signed())
    const updatedAt = new Date(read.signed())
    const occurredStart = flags & HAS_OCCURRED_START ? new Date(read.signed()) : null
    const occurredEnd = flags & HAS_OCCURRED_END ? new Date(read.signed()) : null
    const consolidatedAt = flags & HAS_CONSOLIDATED ? new Date(read.signed()) : null
    const [userId, agentId, sessionId, memberId, supersededBy, embedder] = [optional(), optional(), optional(), optional(), optional(), optional()]
    const tags = Array.from({ length: read.varint() }, at)
    const entities: Array<EntityRef> = Array.from({ length: read.varint() }, () => ({ name: at(), kind: at() }))
    const sourceIds = Array.from({ length: read.varint() }, () => MemoryId.make(at()))
    const words = read.bytes()
    forEachWord(words, 0, words.length, (word) => {
      if (word > wordCount) throw new BadBytes(`memory ${id} names word ${word} of ${wordCount}`)
    })
    // Without one, the index makes the vector from the words (when the embedder makes vectors so).
    const vector = flags & HAS_VECTOR ? read.float32s() : undefined
    const meta: MemoryMeta = {
      id,
      orgId: state.space.orgId,
      spaceId: state.space.spaceId,
      documentId,
      type,
      state: STATES[stateIndex]!,
      entities,
      tags,
      userId,
      agentId,
      sessionId,
      memberId,
      eventTime,
      occurredStart,
      occurredEnd,
      sourceIds,
      position,
      consolidatedAt,
      supersededBy: supersededBy === null ? null : MemoryId.make(supersededBy),
      createdAt,
      updatedAt
    }
    const entry: SnapshotEntry = {
      meta,
      embedder,
      placed: {
        id,
        words,
        vector,
        entities: [...new Set(entities.map((e) => e.name.toLowerCase()))],
        eventTime: (occurredStart ?? eventTime).getTime(),
        groupKey: sourceIds.length > 0 ? null : groupKeyOf(meta),
        position,
        active: meta.state === "active",
        superseded: supersededBy !== null,
        asks: (flags & ASKS) !== 0
      }
    }
    state.restore(entry)
    if ((n + 1) % SLICE === 0) yield
  }
  if (!read.done) throw new BadBytes("bytes left after the last memory")
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
