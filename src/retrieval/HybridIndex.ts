/**
 * One space's search index: BM25, vector similarity and (given word vectors)
 * soft term matching fused on z-normalised scores, then (in `accurate` mode)
 * what the data rewards: the best nearby same-group neighbour, entity
 * overlap, and dates the query names.
 */
import { Admission } from "./Admission.ts"
import { Bm25 } from "./Bm25.ts"
import { queryDates } from "./QueryDates.ts"
import { SoftMatcher, type WordVectors, wordVectorsOf } from "./SoftMatch.ts"
import { stem, terms } from "./Text.ts"
import { TopK } from "./TopK.ts"
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
  /** False for a memory that still counts in the keyword statistics but is never returned (a retired one). */
  readonly active?: boolean | undefined
  /** A fact a newer one superseded (a changed attribute): it ranks below what it would, so the current value leads. */
  readonly superseded?: boolean | undefined
  /** A memory that only asks (`onlyAsks`): it states nothing, so it ranks below what it would. */
  readonly asks?: boolean | undefined
}

export interface HybridQuery<D extends IndexDoc = IndexDoc> {
  readonly text: string
  readonly vector?: Float32Array | undefined
  readonly referenceTime?: number | undefined
  readonly mode: "fast" | "accurate"
  readonly limit: number
  readonly candidateCap?: number | undefined
  /** Narrows the active memories a query may return (given each one's id and document); undefined admits them all. */
  readonly eligible?: ((id: string, doc: D) => boolean) | undefined
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
  soft: 0.5,
  neighbour: 0.7,
  /** How much a neighbour counts per step beyond the adjacent one. */
  decay: 0.8,
  entity: 0.25,
  date: 0.6,
  /** Subtracted from a superseded fact's score, in the fused score's units. */
  superseded: 1,
  /** Subtracted from the score of a memory that only asks. */
  asks: 2
}

interface Entry<D extends IndexDoc> {
  readonly doc: D
  readonly slot: number
  readonly entities: ReadonlySet<string>
  /** Vectors of the content words, for soft matching; empty without word vectors. */
  readonly termVectors: ReadonlyArray<Float32Array>
}

/** How many of the best candidates bring their neighbours into the pool (accurate mode). */
const EXPANSION = 30
/** Group positions this close are neighbours: in a dialogue, a speaker's previous turn is two back. */
const REACH = 2

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x))

/** Standardises values against the mean and spread of `sample`. */
const zScore = (sample: ReadonlyArray<number>) => {
  const mean = sample.reduce((a, b) => a + b, 0) / sample.length
  const sd = Math.sqrt(sample.reduce((a, b) => a + (b - mean) * (b - mean), 0) / sample.length) || 1
  return (x: number) => (x - mean) / sd
}

/** Whether two versions of a document index the same words, entities, group and position. */
const sameWords = (a: IndexDoc, b: IndexDoc) =>
  a.text === b.text && (a.keywordExtra ?? "") === (b.keywordExtra ?? "") && a.groupKey === b.groupKey &&
  a.position === b.position && a.entities.length === b.entities.length && a.entities.every((e, i) => e === b.entities[i])

/** `D` is the caller's document type: a query's `eligible` gets the document back, with whatever it carries. */
export class HybridIndex<D extends IndexDoc = IndexDoc> {
  private readonly entries = new Map<string, Entry<D>>()
  private readonly slots: Array<Entry<D> | undefined> = []
  private readonly free: Array<number> = []
  private readonly groups = new Map<string, Map<number, string>>()
  private readonly bm25 = new Bm25()
  private readonly vectors = new VectorIndex()
  private readonly admission = new Admission()

  /** Without `wordVectors` there is no soft term matching: BM25 and sentence vectors only. */
  constructor(private readonly wordVectors?: WordVectors) {}

  get size() {
    return this.entries.size
  }

  has(id: string) {
    return this.entries.has(id)
  }

  /**
   * Adds or replaces a document. A replacement whose words, entities, group
   * and position are its predecessor's (a fact settled or superseded, a
   * memory retired or its tags changed) keeps what was derived from them:
   * its keyword postings, entity set and word vectors.
   */
  upsert(doc: D) {
    const previous = this.entries.get(doc.id)
    const kept = previous !== undefined && sameWords(previous.doc, doc)
    if (previous && !kept) this.detach(previous)
    const slot = previous?.slot ?? this.free.pop() ?? this.slots.length
    const entry: Entry<D> = kept ? { ...previous, doc } : {
      doc,
      slot,
      entities: new Set(doc.entities.map((e) => e.toLowerCase())),
      termVectors: this.wordVectors ? wordVectorsOf(this.wordVectors, doc.text) : []
    }
    this.entries.set(doc.id, entry)
    this.slots[slot] = entry
    this.admission.setActive(slot, doc.active !== false)
    if (doc.vector) this.vectors.set(slot, doc.vector)
    else this.vectors.delete(slot)
    if (kept) return
    this.bm25.add(slot, terms(`${doc.text} ${doc.keywordExtra ?? ""}`))
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
    this.admission.setActive(entry.slot, true)
    this.free.push(entry.slot)
  }

  private detach(entry: Entry<D>) {
    this.bm25.remove(entry.slot)
    this.vectors.delete(entry.slot)
    if (entry.doc.groupKey !== null) {
      const group = this.groups.get(entry.doc.groupKey)
      if (group?.get(entry.doc.position) === entry.doc.id) group.delete(entry.doc.position)
      if (group?.size === 0) this.groups.delete(entry.doc.groupKey)
    }
  }

  /** The admitted memories of `entry`'s group within `REACH` positions, with their distance. */
  private neighbours(entry: Entry<D>, eligible: (slot: number) => boolean): Array<readonly [slot: number, distance: number]> {
    const group = entry.doc.groupKey === null ? undefined : this.groups.get(entry.doc.groupKey)
    const out: Array<readonly [number, number]> = []
    if (!group) return out
    for (let offset = -REACH; offset <= REACH; offset++) {
      const id = offset === 0 ? undefined : group.get(entry.doc.position + offset)
      const neighbour = id === undefined ? undefined : this.entries.get(id)
      if (neighbour && eligible(neighbour.slot)) out.push([neighbour.slot, Math.abs(offset)])
    }
    return out
  }

  /**
   * Weighted, z-normalised soft-match scores of the pool (a bounded candidate
   * set); a memory outside it scores as the pool's worst.
   */
  private softScores(text: string, pool: ReadonlyArray<number>): (slot: number) => number {
    const matcher = this.wordVectors && WEIGHTS.soft !== 0
      ? SoftMatcher.forQuery(this.wordVectors, text, (word) => this.bm25.idf(stem(word)))
      : undefined
    if (!matcher) return () => 0
    const raw = pool.map((slot) => matcher.score(this.slots[slot]!.termVectors))
    const z = zScore(raw)
    const scores = new Map<number, number>()
    let floor = Infinity
    pool.forEach((slot, i) => {
      const score = WEIGHTS.soft * z(raw[i]!)
      scores.set(slot, score)
      floor = Math.min(floor, score)
    })
    return (slot) => scores.get(slot) ?? floor
  }

  search(query: HybridQuery<D>): ReadonlyArray<RankedHit> {
    const cap = query.candidateCap ?? 200
    const filter = query.eligible
    const admit = this.admission.forQuery(
      this.slots.length,
      filter === undefined ? undefined : (slot) => {
        const entry = this.slots[slot]
        return entry !== undefined && filter(entry.doc.id, entry.doc)
      }
    )
    const eligible = admit ?? (() => true)
    const keyword = this.bm25.score(terms(query.text), admit)
    // The best `cap` by score, ties in the order BM25 reached them (a stable sort's order).
    const keywordBest = new TopK(Math.max(cap, 0))
    for (let i = 0; i < keyword.count; i++) {
      const slot = keyword.slots[i]!
      const score = keyword.of(slot)
      if (keywordBest.wouldKeep(score)) keywordBest.offer(slot, score)
    }
    const keywordTop = keywordBest.entries()
    const scan = query.vector ? this.vectors.scan(query.vector, cap, admit) : undefined
    const vectorTop = scan?.top ?? []
    const pool = [...new Set<number>([...keywordTop.map(([s]) => s), ...vectorTop.map(([s]) => s)])]
    if (pool.length === 0) return []

    const useVector = scan !== undefined && this.vectors.dimensions > 0
    const keywordOf = keyword.of
    const vectorOf = (slot: number) => (useVector ? scan.similarity(slot) : 0)
    // Statistics of the first pool, reused for the memories scored later.
    const zB = zScore(pool.map(keywordOf))
    const zV = zScore(pool.map(vectorOf))
    const wB = useVector ? WEIGHTS.bm25 : 1
    const baseOf = (slot: number) => wB * zB(keywordOf(slot)) + (1 - wB) * zV(vectorOf(slot))

    if (query.mode === "accurate") {
      // Neighbours of the best candidates join the pool: an answer often sits a turn or two after the match.
      const inPool = new Set(pool)
      const base = new Map(pool.map((slot) => [slot, baseOf(slot)]))
      const leaders = [...pool].sort((a, b) => base.get(b)! - base.get(a)!).slice(0, EXPANSION)
      for (const leader of leaders) {
        for (const [slot] of this.neighbours(this.slots[leader]!, eligible)) {
          if (!inPool.has(slot)) {
            inPool.add(slot)
            pool.push(slot)
          }
        }
      }
    }
    const softOf = this.softScores(query.text, pool)
    const fused = new Map<number, number>()
    const fusedOf = (slot: number) => {
      let value = fused.get(slot)
      if (value === undefined) fused.set(slot, (value = baseOf(slot) + softOf(slot)))
      return value
    }
    for (const slot of pool) fusedOf(slot)

    const boosts = new Map<number, number>()
    if (query.mode === "accurate") {
      const queryWords = new Set(query.text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
      const spans = queryDates(query.text, query.referenceTime)
      for (const slot of pool) {
        const entry = this.slots[slot]!
        let near = 0
        for (const [neighbour, distance] of this.neighbours(entry, eligible)) {
          near = Math.max(near, WEIGHTS.decay ** (distance - 1) * fusedOf(neighbour))
        }
        let boost = WEIGHTS.neighbour * near
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

    return pool
      .map((slot) => {
        const doc = this.slots[slot]!.doc
        const boost = (boosts.get(slot) ?? 0) - (doc.superseded === true ? WEIGHTS.superseded : 0) - (doc.asks === true ? WEIGHTS.asks : 0)
        return { slot, total: fused.get(slot)! + boost, boost }
      })
      .sort((a, b) => b.total - a.total)
      .slice(0, query.limit)
      .map((hit) => ({
        id: this.slots[hit.slot]!.doc.id,
        score: sigmoid(hit.total),
        bm25: keywordOf(hit.slot),
        vector: vectorOf(hit.slot),
        boost: hit.boost
      }))
  }
}
