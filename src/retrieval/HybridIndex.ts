/**
 * One space's search index: BM25 and vector similarity fused on z-normalised
 * scores, then (in `accurate` mode) what the data rewards: the better
 * same-group neighbour, entity overlap, and dates the query names.
 */
import { Bm25 } from "./Bm25.ts"
import { queryDates } from "./QueryDates.ts"
import { terms } from "./Text.ts"
import { VectorIndex } from "./VectorIndex.ts"

export interface IndexDoc {
  readonly id: string
  readonly text: string
  readonly keywordExtra?: string | undefined
  readonly vector?: Float32Array | undefined
  readonly entities: ReadonlyArray<string>
  readonly eventTime: number | null
  readonly groupKey: string | null
  readonly position: number
}

export interface HybridQuery {
  readonly text: string
  readonly vector?: Float32Array | undefined
  readonly referenceTime?: number | undefined
  readonly mode: "fast" | "accurate"
  readonly limit: number
  readonly candidateCap?: number | undefined
  readonly eligible?: ((id: string) => boolean) | undefined
}

export interface RankedHit {
  readonly id: string
  readonly score: number
  readonly bm25: number
  readonly vector: number
  readonly boost: number
}

export const WEIGHTS = {
  bm25: 0.45,
  neighbour: 0.7,
  entity: 0.25,
  date: 0.6
}

interface Entry {
  readonly doc: IndexDoc
  readonly slot: number
  readonly entities: ReadonlySet<string>
}

/** How many of the best candidates bring their neighbours into the pool (accurate mode). */
const EXPANSION = 30

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x))

export class HybridIndex {
  private readonly entries = new Map<string, Entry>()
  private readonly slots: Array<Entry | undefined> = []
  private readonly free: Array<number> = []
  private readonly groups = new Map<string, Map<number, string>>()
  private readonly bm25 = new Bm25()
  private readonly vectors = new VectorIndex()

  get size() {
    return this.entries.size
  }

  has(id: string) {
    return this.entries.has(id)
  }

  upsert(doc: IndexDoc) {
    const previous = this.entries.get(doc.id)
    if (previous) this.detach(previous)
    const slot = previous?.slot ?? this.free.pop() ?? this.slots.length
    const entry: Entry = { doc, slot, entities: new Set(doc.entities.map((e) => e.toLowerCase())) }
    this.entries.set(doc.id, entry)
    this.slots[slot] = entry
    this.bm25.add(slot, terms(`${doc.text} ${doc.keywordExtra ?? ""}`))
    if (doc.vector) this.vectors.set(slot, doc.vector)
    if (doc.groupKey !== null) {
      let group = this.groups.get(doc.groupKey)
      if (!group) this.groups.set(doc.groupKey, (group = new Map()))
      group.set(doc.position, doc.id)
    }
  }

  setVector(id: string, vector: Float32Array) {
    const entry = this.entries.get(id)
    if (entry) this.vectors.set(entry.slot, vector)
  }

  remove(id: string) {
    const entry = this.entries.get(id)
    if (!entry) return
    this.detach(entry)
    this.entries.delete(id)
    this.slots[entry.slot] = undefined
    this.free.push(entry.slot)
  }

  private detach(entry: Entry) {
    this.bm25.remove(entry.slot)
    this.vectors.delete(entry.slot)
    if (entry.doc.groupKey !== null) {
      const group = this.groups.get(entry.doc.groupKey)
      if (group?.get(entry.doc.position) === entry.doc.id) group.delete(entry.doc.position)
      if (group?.size === 0) this.groups.delete(entry.doc.groupKey)
    }
  }

  search(query: HybridQuery): ReadonlyArray<RankedHit> {
    const cap = query.candidateCap ?? 200
    const admitted = new Map<number, boolean>()
    const eligible = (slot: number) => {
      let ok = admitted.get(slot)
      if (ok === undefined) {
        const entry = this.slots[slot]
        ok = entry !== undefined && (query.eligible === undefined || query.eligible(entry.doc.id))
        admitted.set(slot, ok)
      }
      return ok
    }
    const keyword = this.bm25.score(terms(query.text), eligible)
    const keywordTop = [...keyword].sort((a, b) => b[1] - a[1]).slice(0, cap)
    const vectorTop = query.vector ? this.vectors.top(query.vector, cap, eligible) : []
    const candidates = new Set<number>([...keywordTop.map(([s]) => s), ...vectorTop.map(([s]) => s)])
    if (candidates.size === 0) return []

    const vectorOf = (slot: number) => (query.vector ? this.vectors.similarity(slot, query.vector) : 0)
    const list = [...candidates]
    const rawB = list.map((s) => keyword.get(s) ?? 0)
    const rawV = list.map(vectorOf)
    // Statistics of the candidate pool, reused for neighbours outside it.
    const stats = (values: ReadonlyArray<number>) => {
      const mean = values.reduce((a, b) => a + b, 0) / values.length
      const sd = Math.sqrt(values.reduce((a, b) => a + (b - mean) * (b - mean), 0) / values.length) || 1
      return { mean, sd }
    }
    const sB = stats(rawB)
    const sV = stats(rawV)
    const useVector = query.vector !== undefined && this.vectors.dimensions > 0
    const wB = useVector ? WEIGHTS.bm25 : 1
    const fusedOf = (b: number, v: number) => wB * ((b - sB.mean) / sB.sd) + (1 - wB) * (useVector ? (v - sV.mean) / sV.sd : 0)
    const fused = new Map<number, number>()
    list.forEach((slot, i) => fused.set(slot, fusedOf(rawB[i]!, rawV[i]!)))

    const boosts = new Map<number, number>()
    if (query.mode === "accurate") {
      // Neighbours of the best candidates join the pool: an answer often sits one turn after the match.
      const leaders = [...list].sort((a, b) => fused.get(b)! - fused.get(a)!).slice(0, EXPANSION)
      for (const slot of leaders) {
        const doc = this.slots[slot]!.doc
        const group = doc.groupKey === null ? undefined : this.groups.get(doc.groupKey)
        for (const offset of [-1, 1]) {
          const id = group?.get(doc.position + offset)
          const neighbour = id === undefined ? undefined : this.entries.get(id)
          if (neighbour && !fused.has(neighbour.slot) && eligible(neighbour.slot)) {
            const b = keyword.get(neighbour.slot) ?? 0
            const v = vectorOf(neighbour.slot)
            fused.set(neighbour.slot, fusedOf(b, v))
            list.push(neighbour.slot)
            rawB.push(b)
            rawV.push(v)
          }
        }
      }
      const baseFused = (slot: number) => fused.get(slot) ?? fusedOf(keyword.get(slot) ?? 0, vectorOf(slot))
      const queryWords = new Set(query.text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
      const spans = queryDates(query.text, query.referenceTime)
      for (const slot of list) {
        const entry = this.slots[slot]!
        let boost = 0
        const group = entry.doc.groupKey === null ? undefined : this.groups.get(entry.doc.groupKey)
        if (group) {
          let best = -Infinity
          for (const offset of [-1, 1]) {
            const id = group.get(entry.doc.position + offset)
            const neighbour = id === undefined ? undefined : this.entries.get(id)
            if (neighbour && eligible(neighbour.slot)) best = Math.max(best, baseFused(neighbour.slot))
          }
          if (best > 0) boost += WEIGHTS.neighbour * best
        }
        for (const entity of entry.entities) {
          if (entity.split(/\s+/).every((part) => queryWords.has(part))) boost += WEIGHTS.entity
        }
        if (spans.length > 0 && entry.doc.eventTime !== null) {
          const t = entry.doc.eventTime
          if (spans.some((s) => t >= s.start && t <= s.end)) boost += WEIGHTS.date
        }
        boosts.set(slot, boost)
      }
    }

    return list
      .map((slot, i) => {
        const boost = boosts.get(slot) ?? 0
        return { slot, total: fused.get(slot)! + boost, bm25: rawB[i]!, vector: rawV[i]!, boost }
      })
      .sort((a, b) => b.total - a.total)
      .slice(0, query.limit)
      .map((hit) => ({
        id: this.slots[hit.slot]!.doc.id,
        score: sigmoid(hit.total),
        bm25: hit.bm25,
        vector: hit.vector,
        boost: hit.boost
      }))
  }
}
