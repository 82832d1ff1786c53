/**
 * The in-memory side of one space: its memories by id and their search index.
 * A cache of PostgreSQL, rebuilt whenever the entity is activated.
 */
import type { Recall } from "../domain/SpaceProtocol.ts"
import { HybridIndex, type IndexDoc, type RankedHit } from "../retrieval/HybridIndex.ts"
import type { WordVectors } from "../retrieval/SoftMatch.ts"
import { bytesToVector, type MemoryRow } from "../../services/store/MemoryRepo.ts"
import { narrowing } from "./Selection.ts"

/** Memories written under one session, or at one event time, are neighbours. */
export const groupKeyOf = (row: MemoryRow) =>
  row.session_id !== null ? `s:${row.session_id}` : `t:${new Date(row.event_time).toISOString()}`

/** An indexed memory keeps its row, so a recall's filters read it without a lookup by id. */
interface MemoryDoc extends IndexDoc {
  readonly row: MemoryRow
}

export class SpaceState {
  readonly rows = new Map<string, MemoryRow>()
  readonly index: HybridIndex<MemoryDoc>
  private nextPosition = 0

  constructor(readonly embedderId: string, wordVectors?: WordVectors) {
    this.index = new HybridIndex<MemoryDoc>(wordVectors)
  }

  get size() {
    return this.rows.size
  }

  position() {
    return this.nextPosition++
  }

  toDoc(row: MemoryRow): MemoryDoc {
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
      position: row.position,
      // Retired memories keep counting in the keyword statistics, as they always have, but no recall sees them.
      active: row.state === "active",
      row
    }
  }

  /** The memories a recall may see (`eligibility`: the index keeps retired ones out), ranked. */
  rank(recall: Recall, vector: Float32Array | undefined, mode: "fast" | "accurate", limit: number): ReadonlyArray<RankedHit> {
    const narrow = narrowing(recall)
    return this.index.search({
      text: recall.query,
      vector,
      referenceTime: recall.queryTime === null ? undefined : Date.parse(recall.queryTime),
      mode,
      limit,
      eligible: narrow === undefined ? undefined : (_id, doc) => narrow(doc.row)
    })
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
