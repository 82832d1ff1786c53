/**
 * Incremental BM25 over integer document slots. Postings are typed arrays in
 * insertion order (a removed document leaves a hole until the posting is
 * compacted); a query accumulates into per-slot arrays reused across queries.
 */

interface Posting {
  readonly term: string
  slots: Int32Array
  counts: Int32Array
  /** Entries used, holes included. */
  length: number
  /** Documents holding the term. */
  live: number
}

/** A removed document's slot in a posting. */
const HOLE = -1

/** One query's keyword scores; valid until the next `score` call. */
export interface KeywordScores {
  /** The scored slots in the order the query first reached them (ties keep that order). */
  readonly slots: Int32Array
  readonly count: number
  /** The score of `slot`, 0 when it matched no query term or was not admitted. */
  readonly of: (slot: number) => number
}

const grown = <A extends Int32Array | Float64Array | Uint32Array>(array: A, size: number, make: (n: number) => A): A => {
  if (size <= array.length) return array
  const next = make(Math.max(size, array.length * 2, 64))
  next.set(array)
  return next
}

export class Bm25 {
  private readonly postings = new Map<string, Posting>()
  /** Per slot: the postings holding it and its entry in each (parallel arrays); undefined when empty. */
  private readonly postingsOf: Array<Array<Posting> | undefined> = []
  private readonly entriesOf: Array<Int32Array | undefined> = []
  private lengths = new Int32Array(0)
  private documents = 0
  private totalLength = 0
  // Query accumulators, by slot; `stamps[slot] === generation` marks a slot scored by the current query.
  private sums = new Float64Array(0)
  private stamps = new Uint32Array(0)
  private reached = new Int32Array(0)
  private generation = 0

  constructor(readonly k1 = 1.2, readonly b = 0.75) {}

  get size() {
    return this.documents
  }

  add(slot: number, docTerms: ReadonlyArray<string>) {
    this.remove(slot)
    const counts = new Map<string, number>()
    for (const term of docTerms) counts.set(term, (counts.get(term) ?? 0) + 1)
    const held: Array<Posting> = []
    const entries = new Int32Array(counts.size)
    for (const [term, count] of counts) {
      let posting = this.postings.get(term)
      if (!posting) {
        posting = { term, slots: new Int32Array(4), counts: new Int32Array(4), length: 0, live: 0 }
        this.postings.set(term, posting)
      }
      if (posting.length === posting.slots.length) {
        posting.slots = grown(posting.slots, posting.length + 1, (n) => new Int32Array(n))
        posting.counts = grown(posting.counts, posting.length + 1, (n) => new Int32Array(n))
      }
      entries[held.length] = posting.length
      posting.slots[posting.length] = slot
      posting.counts[posting.length++] = count
      posting.live++
      held.push(posting)
    }
    this.lengths = grown(this.lengths, slot + 1, (n) => new Int32Array(n))
    this.lengths[slot] = docTerms.length
    this.postingsOf[slot] = held
    this.entriesOf[slot] = entries
    this.documents++
    this.totalLength += docTerms.length
  }

  remove(slot: number) {
    const held = this.postingsOf[slot]
    if (!held) return
    const entries = this.entriesOf[slot]!
    for (let k = 0; k < held.length; k++) {
      const posting = held[k]!
      posting.slots[entries[k]!] = HOLE
      posting.live--
      if (posting.live === 0) this.postings.delete(posting.term)
      else if (posting.length - posting.live > Math.max(16, posting.live)) this.compact(posting)
    }
    this.totalLength -= this.lengths[slot]!
    this.documents--
    this.postingsOf[slot] = undefined
    this.entriesOf[slot] = undefined
  }

  /** Closes a posting's holes, keeping its order, and re-points its documents at their new entries. */
  private compact(posting: Posting) {
    let write = 0
    for (let read = 0; read < posting.length; read++) {
      const slot = posting.slots[read]!
      if (slot === HOLE) continue
      posting.slots[write] = slot
      posting.counts[write] = posting.counts[read]!
      const held = this.postingsOf[slot]!
      this.entriesOf[slot]![held.indexOf(posting)] = write
      write++
    }
    posting.length = write
  }

  /** Inverse document frequency of a term; a term no document holds gets the rarest value. */
  idf(term: string) {
    const n = this.documents
    const df = this.postings.get(term)?.live ?? 0
    return Math.log(1 + (n - df + 0.5) / (df + 0.5))
  }

  /**
   * Scores of every slot matching at least one query term and admitted by
   * `admit` (every slot when undefined), accumulated term by term.
   */
  score(queryTerms: ReadonlyArray<string>, admit?: (slot: number) => boolean): KeywordScores {
    const capacity = this.lengths.length
    if (this.stamps.length < capacity) {
      this.sums = new Float64Array(capacity)
      this.stamps = new Uint32Array(capacity)
      this.reached = new Int32Array(capacity)
      this.generation = 0
    }
    if (this.generation === 0xffffffff) {
      this.stamps.fill(0)
      this.generation = 0
    }
    const generation = ++this.generation
    const { b, k1, lengths, reached, stamps, sums } = this
    let count = 0
    const n = this.documents
    if (n > 0) {
      const avg = this.totalLength / n || 1
      for (const term of new Set(queryTerms)) {
        const posting = this.postings.get(term)
        if (!posting) continue
        const idf = this.idf(term)
        const { counts, length, slots } = posting
        for (let i = 0; i < length; i++) {
          const slot = slots[i]!
          if (slot === HOLE || (admit !== undefined && !admit(slot))) continue
          const tf = counts[i]!
          const part = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[slot]!) / avg))
          if (stamps[slot] === generation) sums[slot] = sums[slot]! + part
          else {
            stamps[slot] = generation
            sums[slot] = part
            reached[count++] = slot
          }
        }
      }
    }
    return {
      slots: reached,
      count,
      of: (slot) => (slot < stamps.length && stamps[slot] === generation ? sums[slot]! : 0)
    }
  }
}
