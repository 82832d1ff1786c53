/**
 * The in-memory side of one space: its memories (as columns, `MemoryColumns`)
 * and their search index, by the index's slots. A cache of PostgreSQL,
 * rebuilt whenever the entity is activated (from a snapshot, or from the
 * store); only the space's writer changes it, and only after the store has
 * committed.
 */
import type { MemoryId } from "../domain/Ids.ts"
import type { IndexedMemory } from "../domain/Memory.ts"
import type { Recall } from "../domain/SpaceProtocol.ts"
import { type BulkDocs, HybridIndex, type IndexDoc, type PlacedDoc, type RankedHit } from "../retrieval/HybridIndex.ts"
import type { PartsAhead } from "../retrieval/WakeThread.ts"
import type { WordPart } from "../retrieval/Lexicon.ts"
import type { WordVectors } from "../retrieval/SoftMatch.ts"
import { onlyAsks } from "../retrieval/Text.ts"
import { speakerOf } from "../ingestion/Speaker.ts"
import { bytesToVector, vectorToBytes } from "../../services/store/MemoryRows.ts"
import { type BulkColumns, MemoryColumns, type MemoryMeta, type MemoryTexts } from "./MemoryColumns.ts"
import { narrowing } from "./Selection.ts"

export type { MemoryMeta, MemoryTexts } from "./MemoryColumns.ts"

/** The group of memories written at one event time (ms): the number itself, which a million distinct times make quickly. */
export const timeGroupKey = (eventTime: number) => `t:${eventTime}`

/** Memories written under one session, or at one event time, are neighbours. */
export const groupKeyOf = (memory: Pick<MemoryMeta, "sessionId" | "eventTime">) =>
  memory.sessionId !== null ? `s:${memory.sessionId}` : timeGroupKey(memory.eventTime.getTime())

/** The embedder a space's vectors come from, and (when it has one) how a text's vector is made from its words. */
export interface IndexEmbedder {
  readonly id: string
  readonly dimensions: number
  readonly wordPart?: ((word: string) => WordPart | undefined) | undefined
  readonly load?: (() => void) | undefined
}

/** A memory as a snapshot keeps it: its index entry and what it is, without its texts. */
export interface SnapshotEntry {
  readonly placed: PlacedDoc
  readonly meta: MemoryMeta
  readonly embedder: string | null
}

/**
 * Keys to sets of ids, a key with one id holding the id itself: most
 * documents have one or a few memories, and a Set each costs about 100
 * bytes more than its ids (a million one-memory documents, 100 MB).
 */
class Members {
  private readonly byKey = new Map<string, string | Set<string>>()

  add(key: string, id: string) {
    const held = this.byKey.get(key)
    if (held === undefined) this.byKey.set(key, id)
    else if (typeof held === "string") {
      if (held !== id) this.byKey.set(key, new Set([held, id]))
    } else held.add(id)
  }

  delete(key: string, id: string) {
    const held = this.byKey.get(key)
    if (held === id) this.byKey.delete(key)
    else if (held instanceof Set) {
      held.delete(id)
      if (held.size === 1) this.byKey.set(key, held.values().next().value!)
    }
  }

  /** Whether any key holds an id. */
  get empty() {
    return this.byKey.size === 0
  }

  get(key: string): ReadonlyArray<string> {
    const held = this.byKey.get(key)
    return held === undefined ? [] : typeof held === "string" ? [held] : [...held]
  }

  clear() {
    this.byKey.clear()
  }
}

export class SpaceState {
  private indexNow!: HybridIndex
  private columnsNow!: MemoryColumns
  private next = 0
  /** Counts the changes made to the state (not its restoring from a snapshot): a snapshot notes the count it saw. */
  changes = 0
  /** Counts the memories removed or replaced: an erased text's words leave the snapshot at its next save. */
  replacements = 0
  /** Memory ids per document, so a write knows what replacing a document takes with it. */
  private readonly documentsHeld = new Members()
  /**
   * False after a bulk restore until something asks: only a change needs a
   * document's memories, and listing a million of them took half a second
   * of a wake.
   */
  private documentsListed = true

  private get documents(): Members {
    if (!this.documentsListed) {
      this.documentsListed = true
      for (const [id, documentId] of this.columns.documentsOf()) this.documentsHeld.add(documentId, id)
    }
    return this.documentsHeld
  }
  /** For each memory, the syntheses (notes, experiences, summaries) that list it among their sources. */
  private readonly builtOn = new Members()

  constructor(
    readonly space: { readonly orgId: MemoryMeta["orgId"]; readonly spaceId: MemoryMeta["spaceId"] },
    readonly embedder: IndexEmbedder,
    private readonly wordVectors?: WordVectors
  ) {
    this.reset()
  }

  get index(): HybridIndex {
    return this.indexNow
  }

  get columns(): MemoryColumns {
    return this.columnsNow
  }

  /** Empties the state at once (a snapshot that did not read back whole, a space deleted). */
  reset() {
    const columns = new MemoryColumns(this.space.orgId, this.space.spaceId)
    this.columnsNow = columns
    this.indexNow = new HybridIndex(this.wordVectors, {
      wordPart: this.embedder.wordPart,
      dimensions: this.embedder.dimensions,
      onRenumber: (renumber, slots) => columns.renumber(renumber, slots)
    })
    this.documentsHeld.clear()
    this.documentsListed = true
    this.builtOn.clear()
    this.next = 0
    this.changes++
  }

  get embedderId() {
    return this.embedder.id
  }

  get size() {
    return this.index.size
  }

  /** The position the next stored memory takes (order of writing within the space). */
  get nextPosition() {
    return this.next
  }

  /** Whether every memory's texts are in memory (a space woken from a snapshot reads them after). */
  get complete() {
    return this.columns.complete
  }

  has(id: string) {
    return this.index.has(id)
  }

  /** The whole memory; undefined when unknown or while its texts are still being read. */
  get(id: string): IndexedMemory | undefined {
    const slot = this.index.slot(id)
    if (slot === undefined) return undefined
    const vector = this.embedder.wordPart === undefined ? this.index.placedAt(slot)?.vector : undefined
    return this.columns.record(slot, vector === undefined ? null : Buffer.from(vectorToBytes(vector)))
  }

  /** A memory's text, while the space holds it (not while a woken space is still reading its texts). */
  textOf(id: string): string | undefined {
    const slot = this.index.slot(id)
    return slot === undefined ? undefined : this.columns.text(slot)
  }

  /** The memory without its texts (type, state, scope, tags, times, sources). */
  meta(id: string): MemoryMeta | undefined {
    const slot = this.index.slot(id)
    return slot === undefined ? undefined : this.columns.meta(slot)
  }

  /** Every memory, whole (the space's texts must all be here). */
  *all(): IterableIterator<IndexedMemory> {
    for (const id of this.index.liveIds()) {
      const memory = this.get(id)
      if (memory === undefined) throw new Error(`memory ${id} has no text yet`)
      yield memory
    }
  }

  /** Every memory without its texts. */
  *metas(): IterableIterator<MemoryMeta> {
    for (const id of this.index.liveIds()) yield this.meta(id)!
  }

  /** The ids whose texts are still to be read from the store. */
  missingTexts(): Array<string> {
    const out: Array<string> = []
    for (const id of this.index.liveIds()) if (!this.columns.hasText(this.index.slot(id)!)) out.push(id)
    return out
  }

  /** The texts read from the store for a memory woken without them; `sourceDiff`, when not null, stands for the source. */
  fillText(id: string, texts: MemoryTexts, sourceDiff: string | null = null) {
    const slot = this.index.slot(id)
    if (slot !== undefined) this.columns.fillText(slot, texts, sourceDiff)
  }

  toDoc(memory: IndexedMemory): IndexDoc {
    return {
      id: memory.id,
      text: memory.text,
      keywordExtra: [
        memory.sourceText !== memory.text ? memory.sourceText : "",
        memory.context,
        memory.eventTime.toUTCString().slice(5, 16)
      ].filter((s) => s !== "").join(" "),
      // Vectors a space's embedder makes from words are made by the index; others are as stored.
      vector: this.embedder.wordPart === undefined && memory.embedding !== null && memory.embedder === this.embedder.id
        ? bytesToVector(memory.embedding)
        : undefined,
      entities: memory.entities.map((e) => e.name),
      eventTime: (memory.occurredStart ?? memory.eventTime).getTime(),
      // A synthesis stands apart: it is no turn of a conversation, so it is nobody's neighbour.
      groupKey: memory.sourceIds.length > 0 ? null : groupKeyOf(memory),
      position: memory.position,
      // Retired memories keep counting in the keyword statistics, as they always have, but no recall sees them.
      active: memory.state === "active",
      superseded: memory.supersededBy !== null,
      asks: onlyAsks(memory.text),
      // A synthesis speaks for the subject its facts share (the consolidation's `subject`).
      speaker: memory.sourceIds.length > 0
        ? (typeof memory.metadata["subject"] === "string" ? memory.metadata["subject"] : null)
        : speakerOf(memory)
    }
  }

  /** The memories a recall may see (the index keeps retired ones out), ranked. */
  rank(recall: Recall, vector: Float32Array | undefined, mode: "fast" | "accurate", limit: number, now: number): ReadonlyArray<RankedHit> {
    const narrow = narrowing(recall)
    // Notes beside the facts they were made from: ranked apart, so that the facts rank as they would alone and a
    // note only stands in for them where it serves the query better (Selection.select).
    const types = recall.memoryTypes
    const both = types === null || types.length === 0 || (types.includes("fact") && types.some((t) => t !== "fact"))
    const apart = recall.preferObservations && both && !this.builtOn.empty
      ? (slot: number) => this.columns.typeAt(slot) !== "fact"
      : undefined
    return this.index.search({
      text: recall.query,
      vector,
      referenceTime: recall.queryTime === null ? now : Date.parse(recall.queryTime),
      mode,
      limit,
      eligible: narrow === undefined ? undefined : (_id, slot) => {
        const meta = this.columns.meta(slot)
        return meta !== undefined && narrow(meta)
      },
      apart
    })
  }

  put(memory: IndexedMemory) {
    const previousSlot = this.index.slot(memory.id)
    if (previousSlot !== undefined) {
      this.unlink(this.columns.meta(previousSlot)!)
      this.columns.clear(previousSlot)
      this.replacements++
    }
    const slot = this.index.upsert(this.toDoc(memory))
    this.columns.set(slot, memory, memory, memory.embedder)
    this.link(memory)
    if (memory.position >= this.next) this.next = memory.position + 1
    this.changes++
  }

  /** Room for `memories` more whose packed words take `bytes` (a snapshot about to be read back). */
  reserve(memories: number, bytes: number) {
    this.index.reserve(memories, bytes)
    this.columns.reserve(this.index.slotCount + memories)
  }

  /** An empty state filled with a snapshot's memories at once; their texts follow from the store. */
  *bulkRestore(index: BulkDocs, columns: BulkColumns, ahead?: PartsAhead): Generator<void | Promise<void>, void> {
    if (this.size > 0) throw new Error("bulk restore into a non-empty state")
    yield* this.index.bulkLoad(index, ahead)
    this.columns.bulkLoad(columns)
    this.documentsListed = false
    yield
    let next = 0
    for (let slot = 0; slot < columns.ids.length; slot++) {
      const id = columns.ids[slot]!
      for (const source of columns.sourceIds[slot]!) this.builtOn.add(source, id)
      if (columns.positions[slot]! >= next) next = columns.positions[slot]! + 1
      if ((slot + 1) % 16384 === 0) yield
    }
    this.next = next
  }

  /** A memory read back from a snapshot: its index entry as it was written, its texts to follow from the store. */
  restore(entry: SnapshotEntry) {
    const slot = this.index.place(entry.placed)
    this.columns.set(slot, entry.meta, undefined, entry.embedder)
    this.link(entry.meta)
    if (entry.meta.position >= this.next) this.next = entry.meta.position + 1
  }

  /** Every memory as a snapshot writes it, in slot order. */
  *entries(): IterableIterator<SnapshotEntry> {
    for (let slot = 0; slot < this.index.slotCount; slot++) {
      const placed = this.index.placedAt(slot)
      const meta = placed === undefined ? undefined : this.columns.meta(slot)
      if (placed !== undefined && meta !== undefined) yield { placed, meta, embedder: this.columns.embedderAt(slot) }
    }
  }

  remove(id: string) {
    const slot = this.index.slot(id)
    if (slot === undefined) return
    const previous = this.columns.meta(slot)
    if (previous) this.unlink(previous)
    this.columns.clear(slot)
    this.index.remove(id)
    this.changes++
    this.replacements++
  }

  /** The memories a write to this document replaces. */
  ofDocument(documentId: string): ReadonlyArray<string> {
    return this.documents.get(documentId)
  }

  /** The active facts a synthesis was made from (a summary's through its notes); undefined for a fact. */
  sourcesOf(id: string): ReadonlyArray<string> | undefined {
    const memory = this.meta(id)
    if (memory === undefined || memory.type === "fact" || memory.sourceIds.length === 0) return undefined
    const facts = new Set<string>()
    const visit = (ids: ReadonlyArray<string>, depth: number) => {
      for (const source of ids) {
        const found = this.meta(source)
        if (found === undefined || found.state !== "active") continue
        if (found.type === "fact") facts.add(source)
        else if (depth < 3) visit(found.sourceIds, depth + 1)
      }
    }
    visit(memory.sourceIds, 0)
    return [...facts]
  }

  /** The syntheses built on any of `ids`, and the summaries built on those. */
  dependentsOf(ids: Iterable<string>): ReadonlyArray<MemoryMeta> {
    const found = new Map<string, MemoryMeta>()
    const visit = (id: string) => {
      for (const dependent of this.builtOn.get(id)) {
        if (found.has(dependent)) continue
        const memory = this.meta(dependent)
        if (!memory) continue
        found.set(dependent, memory)
        visit(dependent)
      }
    }
    for (const id of ids) visit(id)
    return [...found.values()]
  }

  private link(memory: MemoryMeta) {
    this.documents.add(memory.documentId, memory.id)
    for (const source of memory.sourceIds) this.builtOn.add(source, memory.id)
  }

  private unlink(memory: MemoryMeta) {
    this.documents.delete(memory.documentId, memory.id)
    for (const source of memory.sourceIds) this.builtOn.delete(source, memory.id)
  }

  /** What a committed write changed: the memories it replaced go, the ones it stored come in. */
  apply(stored: { readonly memories: ReadonlyArray<IndexedMemory>; readonly replaced: ReadonlyArray<MemoryId> }) {
    for (const id of stored.replaced) this.remove(id)
    for (const memory of stored.memories) this.put(memory)
  }

  clear() {
    this.reset()
  }
}
