/**
 * The in-memory side of one space: its memories by id and their search index.
 * A cache of PostgreSQL, rebuilt whenever the entity is activated; only the
 * space's writer changes it, and only after the store has committed.
 */
import type { MemoryId } from "../domain/Ids.ts"
import type { IndexedMemory } from "../domain/Memory.ts"
import type { Recall } from "../domain/SpaceProtocol.ts"
import { HybridIndex, type IndexDoc, type RankedHit } from "../retrieval/HybridIndex.ts"
import type { WordVectors } from "../retrieval/SoftMatch.ts"
import { onlyAsks } from "../retrieval/Text.ts"
import { bytesToVector } from "../../services/store/MemoryRows.ts"
import { narrowing } from "./Selection.ts"

/** Memories written under one session, or at one event time, are neighbours. */
export const groupKeyOf = (memory: IndexedMemory) =>
  memory.sessionId !== null ? `s:${memory.sessionId}` : `t:${memory.eventTime.toISOString()}`

/** An indexed memory keeps its record, so a recall's filters read it without a lookup by id. */
interface MemoryDoc extends IndexDoc {
  readonly memory: IndexedMemory
}

export class SpaceState {
  readonly memories = new Map<string, IndexedMemory>()
  readonly index: HybridIndex<MemoryDoc>
  private next = 0
  /** Memory ids per document, so a write knows what replacing a document takes with it. */
  private readonly documents = new Map<string, Set<string>>()
  /** For each memory, the syntheses (notes, experiences, summaries) that list it among their sources. */
  private readonly builtOn = new Map<string, Set<string>>()

  constructor(readonly embedderId: string, wordVectors?: WordVectors) {
    this.index = new HybridIndex<MemoryDoc>(wordVectors)
  }

  get size() {
    return this.memories.size
  }

  /** The position the next stored memory takes (order of writing within the space). */
  get nextPosition() {
    return this.next
  }

  get(id: string): IndexedMemory | undefined {
    return this.memories.get(id)
  }

  toDoc(memory: IndexedMemory): MemoryDoc {
    return {
      id: memory.id,
      text: memory.text,
      keywordExtra: [
        memory.sourceText !== memory.text ? memory.sourceText : "",
        memory.context,
        memory.eventTime.toUTCString().slice(5, 16)
      ].filter((s) => s !== "").join(" "),
      vector: memory.embedding !== null && memory.embedder === this.embedderId ? bytesToVector(memory.embedding) : undefined,
      entities: memory.entities.map((e) => e.name),
      eventTime: (memory.occurredStart ?? memory.eventTime).getTime(),
      // A synthesis stands apart: it is no turn of a conversation, so it is nobody's neighbour.
      groupKey: memory.sourceIds.length > 0 ? null : groupKeyOf(memory),
      position: memory.position,
      // Retired memories keep counting in the keyword statistics, as they always have, but no recall sees them.
      active: memory.state === "active",
      superseded: memory.supersededBy !== null,
      asks: onlyAsks(memory.text),
      memory
    }
  }

  /** The memories a recall may see (the index keeps retired ones out), ranked. */
  rank(recall: Recall, vector: Float32Array | undefined, mode: "fast" | "accurate", limit: number): ReadonlyArray<RankedHit> {
    const narrow = narrowing(recall)
    return this.index.search({
      text: recall.query,
      vector,
      referenceTime: recall.queryTime === null ? undefined : Date.parse(recall.queryTime),
      mode,
      limit,
      eligible: narrow === undefined ? undefined : (_id, doc) => narrow(doc.memory)
    })
  }

  put(memory: IndexedMemory) {
    const previous = this.memories.get(memory.id)
    if (previous) this.unlink(previous)
    this.memories.set(memory.id, memory)
    this.link(memory)
    this.index.upsert(this.toDoc(memory))
    if (memory.position >= this.next) this.next = memory.position + 1
  }

  remove(id: string) {
    const previous = this.memories.get(id)
    if (previous) this.unlink(previous)
    this.memories.delete(id)
    this.index.remove(id)
  }

  /** The memories a write to this document replaces. */
  ofDocument(documentId: string): ReadonlyArray<string> {
    return [...(this.documents.get(documentId) ?? [])]
  }

  /** The note or experience a fact is behind, if any is active and `admits` it. */
  coveringNote(factId: string, admits: (memory: IndexedMemory) => boolean): IndexedMemory | undefined {
    for (const id of this.builtOn.get(factId) ?? []) {
      const memory = this.memories.get(id)
      if (memory && (memory.type === "note" || memory.type === "experience") && memory.state === "active" && admits(memory)) return memory
    }
    return undefined
  }

  /** The syntheses built on any of `ids`, and the summaries built on those. */
  dependentsOf(ids: Iterable<string>): ReadonlyArray<IndexedMemory> {
    const found = new Map<string, IndexedMemory>()
    const visit = (id: string) => {
      for (const dependent of this.builtOn.get(id) ?? []) {
        if (found.has(dependent)) continue
        const memory = this.memories.get(dependent)
        if (!memory) continue
        found.set(dependent, memory)
        visit(dependent)
      }
    }
    for (const id of ids) visit(id)
    return [...found.values()]
  }

  private link(memory: IndexedMemory) {
    let members = this.documents.get(memory.documentId)
    if (!members) this.documents.set(memory.documentId, (members = new Set()))
    members.add(memory.id)
    for (const source of memory.sourceIds) {
      let dependents = this.builtOn.get(source)
      if (!dependents) this.builtOn.set(source, (dependents = new Set()))
      dependents.add(memory.id)
    }
  }

  private unlink(memory: IndexedMemory) {
    const members = this.documents.get(memory.documentId)
    members?.delete(memory.id)
    if (members?.size === 0) this.documents.delete(memory.documentId)
    for (const source of memory.sourceIds) {
      const dependents = this.builtOn.get(source)
      dependents?.delete(memory.id)
      if (dependents?.size === 0) this.builtOn.delete(source)
    }
  }

  /** What a committed write changed: the memories it replaced go, the ones it stored come in. */
  apply(stored: { readonly memories: ReadonlyArray<IndexedMemory>; readonly replaced: ReadonlyArray<MemoryId> }) {
    for (const id of stored.replaced) this.remove(id)
    for (const memory of stored.memories) this.put(memory)
  }

  clear() {
    for (const id of [...this.memories.keys()]) this.remove(id)
  }
}
