/**
 * A space's memories as columns by index slot: times in Float64Arrays,
 * repeated strings (scopes, tags, entities, embedder) stored once, no object
 * per memory. A memory object is made when asked for (`record`, `meta`).
 * Texts are UTF-8 bytes in one arena (`TextArena`), a source that differs
 * from its text kept as the store keeps it (the few edits that make it, when
 * shorter). The texts (text, source text, context) and metadata may be
 * missing for a while after the space wakes from a snapshot: they are read
 * from the store then (`fillText`), and `hasText` tells which are there.
 */
import type { MemoryId } from "../domain/Ids.ts"
import type { EntityRef, IndexedMemory, Memory } from "../domain/Memory.ts"
import type { MemoryState, MemoryType } from "../domain/Memories.ts"
import { grown } from "../retrieval/Grown.ts"
import { applySourceDiff } from "../../services/store/SourceDiff.ts"
import { TextArena } from "./TextArena.ts"

/** What a memory is apart from its words and metadata: enough to filter, rank and plan with. */
export type MemoryMeta = Omit<Memory, "text" | "sourceText" | "context" | "metadata">

/** An empty state's memories all at once (a snapshot read back), slot i for the i-th; repeated values already shared. */
export interface BulkColumns {
  readonly ids: ReadonlyArray<MemoryId>
  readonly documentIds: ReadonlyArray<string>
  /** type | state << 2 */
  readonly kinds: Uint8Array
  readonly entities: ReadonlyArray<ReadonlyArray<EntityRef>>
  readonly tags: ReadonlyArray<ReadonlyArray<string>>
  readonly userIds: ReadonlyArray<string | null>
  readonly agentIds: ReadonlyArray<string | null>
  readonly sessionIds: ReadonlyArray<string | null>
  readonly memberIds: ReadonlyArray<string | null>
  readonly sourceIds: ReadonlyArray<ReadonlyArray<MemoryId>>
  readonly supersededBy: ReadonlyArray<MemoryId | null>
  readonly embedders: ReadonlyArray<string | null>
  readonly positions: Int32Array
  /** Times in milliseconds; NaN for none. */
  readonly eventTimes: Float64Array
  readonly occurredStarts: Float64Array
  readonly occurredEnds: Float64Array
  readonly consolidatedAts: Float64Array
  readonly createdAts: Float64Array
  readonly updatedAts: Float64Array
}

export const TYPE_CODES: ReadonlyArray<MemoryType> = ["fact", "note", "experience", "summary"]
export const STATE_CODES: ReadonlyArray<MemoryState> = ["active", "retired", "question"]

export interface MemoryTexts {
  readonly text: string
  readonly sourceText: string
  readonly context: string
  readonly metadata: Memory["metadata"]
}

/** How a slot's source text is kept: as its text, whole, or as the edits that make it from the text. */
const SOURCE_SAME = 0
const SOURCE_WHOLE = 1
const SOURCE_DIFF = 2
/** A slot's text handle while its texts are still to be read from the store. */
const MISSING = -1

const TYPES = TYPE_CODES
const STATES = STATE_CODES
const EMPTY: ReadonlyArray<never> = Object.freeze([])
const NO_METADATA: Memory["metadata"] = Object.freeze({})

const time = (value: Date | null) => (value === null ? Number.NaN : value.getTime())
const date = (value: number) => (Number.isNaN(value) ? null : new Date(value))

/** One copy of each distinct value, so a million memories share their few scopes, tag lists and entities. */
class Interner<A> {
  private readonly byKey = new Map<string, A>()
  constructor(private readonly keyOf: (value: A) => string) {}
  get(value: A): A {
    const key = this.keyOf(value)
    const known = this.byKey.get(key)
    if (known !== undefined) return known
    this.byKey.set(key, value)
    return value
  }
}

export class MemoryColumns {
  private readonly strings = new Interner<string>((s) => s)
  private readonly lists = new Interner<ReadonlyArray<string>>((l) => l.join("\u0000"))
  private readonly entityRefs = new Interner<EntityRef>((e) => `${e.kind}\u0000${e.name}`)
  private readonly entityLists = new Interner<ReadonlyArray<EntityRef>>((l) => l.map((e) => `${e.kind}\u0000${e.name}`).join("\u0001"))
  private ids: Array<MemoryId | undefined> = []
  private documentIds: Array<string> = []
  private readonly arena = new TextArena()
  private textHandles = new Int32Array(0)
  private sourceHandles = new Int32Array(0)
  private sourceKinds = new Uint8Array(0)
  private contexts: Array<string | undefined> = []
  private metadata: Array<Memory["metadata"] | undefined> = []
  private kinds = new Uint8Array(0)
  private entities: Array<ReadonlyArray<EntityRef>> = []
  private tags: Array<ReadonlyArray<string>> = []
  private userIds: Array<string | null> = []
  private agentIds: Array<string | null> = []
  private sessionIds: Array<string | null> = []
  private memberIds: Array<string | null> = []
  private sourceIds: Array<ReadonlyArray<MemoryId>> = []
  private supersededBy: Array<MemoryId | null> = []
  private embedders: Array<string | null> = []
  private positions = new Int32Array(0)
  private eventTimes = new Float64Array(0)
  private occurredStarts = new Float64Array(0)
  private occurredEnds = new Float64Array(0)
  private consolidatedAts = new Float64Array(0)
  private createdAts = new Float64Array(0)
  private updatedAts = new Float64Array(0)
  /** Slots whose texts are missing (woken from a snapshot, not yet read from the store). */
  private missingTexts = 0

  constructor(readonly orgId: Memory["orgId"], readonly spaceId: Memory["spaceId"]) {}

  private intern = (value: string | null) => (value === null ? null : this.strings.get(value))

  /** Room for `slots` memories at once (read back from a snapshot). */
  reserve(slots: number) {
    this.ensure(slots)
  }

  private ensure(size: number) {
    this.kinds = grown(this.kinds, size, (n) => new Uint8Array(n))
    this.textHandles = grown(this.textHandles, size, (n) => new Int32Array(n))
    this.sourceHandles = grown(this.sourceHandles, size, (n) => new Int32Array(n))
    this.sourceKinds = grown(this.sourceKinds, size, (n) => new Uint8Array(n))
    this.positions = grown(this.positions, size, (n) => new Int32Array(n))
    this.eventTimes = grown(this.eventTimes, size, (n) => new Float64Array(n))
    this.occurredStarts = grown(this.occurredStarts, size, (n) => new Float64Array(n))
    this.occurredEnds = grown(this.occurredEnds, size, (n) => new Float64Array(n))
    this.consolidatedAts = grown(this.consolidatedAts, size, (n) => new Float64Array(n))
    this.createdAts = grown(this.createdAts, size, (n) => new Float64Array(n))
    this.updatedAts = grown(this.updatedAts, size, (n) => new Float64Array(n))
  }

  /** Fills empty columns with a snapshot's memories, their texts to be read from the store. */
  bulkLoad(columns: BulkColumns) {
    if (this.ids.length > 0) throw new Error("bulk load into non-empty columns")
    const count = columns.ids.length
    this.ids = [...columns.ids]
    this.documentIds = [...columns.documentIds]
    this.kinds = columns.kinds.slice(0, count)
    this.entities = [...columns.entities]
    this.tags = [...columns.tags]
    this.userIds = [...columns.userIds]
    this.agentIds = [...columns.agentIds]
    this.sessionIds = [...columns.sessionIds]
    this.memberIds = [...columns.memberIds]
    this.sourceIds = [...columns.sourceIds]
    this.supersededBy = [...columns.supersededBy]
    this.embedders = [...columns.embedders]
    this.positions = columns.positions.slice(0, count)
    this.eventTimes = columns.eventTimes.slice(0, count)
    this.occurredStarts = columns.occurredStarts.slice(0, count)
    this.occurredEnds = columns.occurredEnds.slice(0, count)
    this.consolidatedAts = columns.consolidatedAts.slice(0, count)
    this.createdAts = columns.createdAts.slice(0, count)
    this.updatedAts = columns.updatedAts.slice(0, count)
    this.ensure(count)
    this.textHandles.fill(MISSING, 0, count)
    this.contexts = new Array(count)
    this.metadata = new Array(count)
    this.missingTexts = count
  }

  /** Stores a memory at `slot`, its texts included when given (`undefined`: to be read from the store). */
  set(slot: number, meta: MemoryMeta, texts: MemoryTexts | undefined, embedder: string | null) {
    this.ensure(slot + 1)
    if (this.ids[slot] !== undefined) this.releaseTexts(slot)
    this.ids[slot] = meta.id
    this.documentIds[slot] = this.strings.get(meta.documentId)
    this.kinds[slot] = TYPES.indexOf(meta.type) | (STATES.indexOf(meta.state) << 2)
    this.entities[slot] = meta.entities.length === 0
      ? EMPTY
      : this.entityLists.get(meta.entities.map((e) => this.entityRefs.get({ name: e.name, kind: e.kind })))
    this.tags[slot] = meta.tags.length === 0 ? EMPTY : this.lists.get(meta.tags.map((t) => this.strings.get(t)))
    this.userIds[slot] = this.intern(meta.userId)
    this.agentIds[slot] = this.intern(meta.agentId)
    this.sessionIds[slot] = this.intern(meta.sessionId)
    this.memberIds[slot] = this.intern(meta.memberId)
    this.sourceIds[slot] = meta.sourceIds.length === 0 ? EMPTY : [...meta.sourceIds]
    this.supersededBy[slot] = meta.supersededBy
    this.embedders[slot] = this.intern(embedder)
    this.positions[slot] = meta.position
    this.eventTimes[slot] = meta.eventTime.getTime()
    this.occurredStarts[slot] = time(meta.occurredStart)
    this.occurredEnds[slot] = time(meta.occurredEnd)
    this.consolidatedAts[slot] = time(meta.consolidatedAt)
    this.createdAts[slot] = meta.createdAt.getTime()
    this.updatedAts[slot] = meta.updatedAt.getTime()
    this.setTexts(slot, texts)
  }

  /** Keeps a slot's texts (`undefined`: to be read from the store); `sourceDiff`, when given, stands for the source. */
  private setTexts(slot: number, texts: MemoryTexts | undefined, sourceDiff: string | null = null) {
    if (texts === undefined) {
      this.textHandles[slot] = MISSING
      this.contexts[slot] = this.metadata[slot] = undefined
      this.missingTexts++
      return
    }
    this.textHandles[slot] = this.arena.add(texts.text)
    // The source is most often the text itself: nothing more is kept then.
    if (sourceDiff !== null) {
      this.sourceKinds[slot] = SOURCE_DIFF
      this.sourceHandles[slot] = this.arena.add(sourceDiff)
    } else if (texts.sourceText === texts.text) {
      this.sourceKinds[slot] = SOURCE_SAME
    } else {
      this.sourceKinds[slot] = SOURCE_WHOLE
      this.sourceHandles[slot] = this.arena.add(texts.sourceText)
    }
    this.contexts[slot] = texts.context === "" ? "" : texts.context
    this.metadata[slot] = Object.keys(texts.metadata).length === 0 ? NO_METADATA : texts.metadata
  }

  /** Lets an occupied slot's texts go: the arena takes their room back, or the slot no longer counts as missing them. */
  private releaseTexts(slot: number) {
    const handle = this.textHandles[slot]!
    if (handle === MISSING) {
      this.missingTexts--
      return
    }
    this.arena.release(handle)
    if (this.sourceKinds[slot] !== SOURCE_SAME) this.arena.release(this.sourceHandles[slot]!)
    this.textHandles[slot] = MISSING
    this.sourceKinds[slot] = SOURCE_SAME
  }

  /**
   * The texts read from the store for a slot woken without them; the source
   * as the store keeps it (`sourceDiff` from the text, or `texts.sourceText` whole).
   */
  fillText(slot: number, texts: MemoryTexts, sourceDiff: string | null = null) {
    if (this.ids[slot] === undefined || this.textHandles[slot] !== MISSING) return
    this.missingTexts--
    this.setTexts(slot, texts, sourceDiff)
  }

  /** Whether every memory's texts are here. */
  get complete() {
    return this.missingTexts === 0
  }

  /** A slot's text; undefined for a free slot or one whose texts are still being read. */
  text(slot: number): string | undefined {
    const handle = this.textHandles[slot]
    return handle === undefined || handle === MISSING || this.ids[slot] === undefined ? undefined : this.arena.get(handle)
  }

  hasText(slot: number) {
    return this.ids[slot] !== undefined && this.textHandles[slot] !== MISSING
  }

  clear(slot: number) {
    if (this.ids[slot] === undefined) return
    this.releaseTexts(slot)
    this.ids[slot] = undefined
    this.contexts[slot] = this.metadata[slot] = undefined
    this.entities[slot] = this.tags[slot] = this.sourceIds[slot] = EMPTY
  }

  /** The memory at `slot` without its texts, or undefined for a free slot. */
  /** The id and document of every memory held, in slot order. */
  *documentsOf(): IterableIterator<readonly [id: MemoryId, documentId: string]> {
    for (let slot = 0; slot < this.ids.length; slot++) {
      const id = this.ids[slot]
      if (id !== undefined) yield [id, this.documentIds[slot]!]
    }
  }

  meta(slot: number): MemoryMeta | undefined {
    const id = this.ids[slot]
    if (id === undefined) return undefined
    const kind = this.kinds[slot]!
    return {
      id,
      orgId: this.orgId,
      spaceId: this.spaceId,
      documentId: this.documentIds[slot]!,
      type: TYPES[kind & 3]!,
      state: STATES[(kind >> 2) & 3]!,
      entities: this.entities[slot]!,
      tags: this.tags[slot]!,
      userId: this.userIds[slot]!,
      agentId: this.agentIds[slot]!,
      sessionId: this.sessionIds[slot]!,
      memberId: this.memberIds[slot]!,
      eventTime: new Date(this.eventTimes[slot]!),
      occurredStart: date(this.occurredStarts[slot]!),
      occurredEnd: date(this.occurredEnds[slot]!),
      sourceIds: this.sourceIds[slot]!,
      position: this.positions[slot]!,
      consolidatedAt: date(this.consolidatedAts[slot]!),
      supersededBy: this.supersededBy[slot]!,
      createdAt: new Date(this.createdAts[slot]!),
      updatedAt: new Date(this.updatedAts[slot]!)
    }
  }

  /** The whole memory at `slot`; undefined for a free slot or one whose texts are still being read. */
  record(slot: number, embedding: Uint8Array | null): IndexedMemory | undefined {
    const handle = this.textHandles[slot]
    const meta = handle === undefined || handle === MISSING ? undefined : this.meta(slot)
    if (meta === undefined || handle === undefined) return undefined
    const text = this.arena.get(handle)
    const kind = this.sourceKinds[slot]!
    return {
      ...meta,
      text,
      sourceText: kind === SOURCE_SAME
        ? text
        : kind === SOURCE_WHOLE
        ? this.arena.get(this.sourceHandles[slot]!)
        : applySourceDiff(text, this.arena.get(this.sourceHandles[slot]!)),
      context: this.contexts[slot]!,
      metadata: this.metadata[slot]!,
      embedding,
      embedder: this.embedders[slot]!
    }
  }

  embedderAt(slot: number): string | null {
    return this.embedders[slot] ?? null
  }

  typeAt(slot: number): MemoryType {
    return TYPES[this.kinds[slot]! & 3]!
  }

  /** Moves every column to the index's new slot numbers (`renumber[old]`, -1 for a free slot). */
  renumber(renumber: Int32Array, slots: number) {
    const move = <A>(array: Array<A>) => {
      const moved: Array<A> = new Array(slots)
      for (let old = 0; old < Math.min(renumber.length, array.length); old++) if (renumber[old]! >= 0) moved[renumber[old]!] = array[old]!
      return moved
    }
    const moveTyped = <A extends Float64Array | Int32Array | Uint8Array>(array: A, make: (n: number) => A) => {
      const moved = make(Math.max(slots, 64))
      for (let old = 0; old < Math.min(renumber.length, array.length); old++) if (renumber[old]! >= 0) moved[renumber[old]!] = array[old]!
      return moved
    }
    this.ids = move(this.ids)
    this.documentIds = move(this.documentIds)
    this.contexts = move(this.contexts)
    this.metadata = move(this.metadata)
    this.entities = move(this.entities)
    this.tags = move(this.tags)
    this.userIds = move(this.userIds)
    this.agentIds = move(this.agentIds)
    this.sessionIds = move(this.sessionIds)
    this.memberIds = move(this.memberIds)
    this.sourceIds = move(this.sourceIds)
    this.supersededBy = move(this.supersededBy)
    this.embedders = move(this.embedders)
    this.kinds = moveTyped(this.kinds, (n) => new Uint8Array(n))
    this.textHandles = moveTyped(this.textHandles, (n) => new Int32Array(n))
    this.sourceHandles = moveTyped(this.sourceHandles, (n) => new Int32Array(n))
    this.sourceKinds = moveTyped(this.sourceKinds, (n) => new Uint8Array(n))
    this.positions = moveTyped(this.positions, (n) => new Int32Array(n))
    this.eventTimes = moveTyped(this.eventTimes, (n) => new Float64Array(n))
    this.occurredStarts = moveTyped(this.occurredStarts, (n) => new Float64Array(n))
    this.occurredEnds = moveTyped(this.occurredEnds, (n) => new Float64Array(n))
    this.consolidatedAts = moveTyped(this.consolidatedAts, (n) => new Float64Array(n))
    this.createdAts = moveTyped(this.createdAts, (n) => new Float64Array(n))
    this.updatedAts = moveTyped(this.updatedAts, (n) => new Float64Array(n))
  }
}
