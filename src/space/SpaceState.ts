/**
 * The in-memory side of one space: its memories by id and their search index.
 * A cache of PostgreSQL, rebuilt whenever the entity is activated.
 */
import { HybridIndex, type IndexDoc } from "../retrieval/HybridIndex.ts"
import type { WordVectors } from "../retrieval/SoftMatch.ts"
import { bytesToVector, type MemoryRow } from "../../services/store/MemoryRepo.ts"

/** Memories written under one session, or at one event time, are neighbours. */
export const groupKeyOf = (row: MemoryRow) =>
  row.session_id !== null ? `s:${row.session_id}` : `t:${new Date(row.event_time).toISOString()}`

export class SpaceState {
  readonly rows = new Map<string, MemoryRow>()
  readonly index: HybridIndex
  private nextPosition = 0

  constructor(readonly embedderId: string, wordVectors?: WordVectors) {
    this.index = new HybridIndex(wordVectors)
  }

  get size() {
    return this.rows.size
  }

  position() {
    return this.nextPosition++
  }

  toDoc(row: MemoryRow): IndexDoc {
    const date = new Date(row.event_time)
    return {
      id: row.id,
      text: row.text,
      keywordExtra: [row.source_text !== row.text ? row.source_text : "", row.context, date.toUTCString().slice(5, 16)]
        .filter((s) => s !== "")
        .join(" "),
      vector: row.embedding !== null && row.embedder === this.embedderId ? bytesToVector(row.embedding) : undefined,
      entities: row.entities.map((e) => e.name),
      eventTime: (row.occurred_start ?? row.event_time) === null ? null : new Date(row.occurred_start ?? row.event_time).getTime(),
      groupKey: groupKeyOf(row),
      position: row.position
    }
  }

  put(row: MemoryRow) {
    this.rows.set(row.id, row)
    this.index.upsert(this.toDoc(row))
    if (row.position >= this.nextPosition) this.nextPosition = row.position + 1
  }

  remove(id: string) {
    this.rows.delete(id)
    this.index.remove(id)
  }
}
