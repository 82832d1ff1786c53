/**
 * Incremental BM25 over integer document slots and term numbers (a
 * Lexicon's). Slots are given out in increasing order, so every posting
 * lists its slots ascending: a removed document's entries are found by binary
 * search in the postings of its terms (which the caller names) and left as
 * holes until the posting is compacted. A query accumulates into per-slot
 * arrays reused across queries.
 */
import { grown } from "./Grown.ts"

interface Posting {
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

/** Where `slot` sits among a posting's first `length` entries (ascending, holes aside), or -1. */
const find = (posting: Posting, slot: number) => {
  const { slots } = posting
  let low = 0
  let high = posting.length - 1
  while (low <= high) {
    let mid = (low + high) >>> 1
    // A hole keeps no order: step to the nearest entry that is not one, within the range.
    let probe = mid
    while (probe <= high && slots[probe] === HOLE) probe++
    if (probe > high) {
      high = mid - 1
      continue
    }
    mid = probe
    const at = slots[mid]!
    if (at === slot) return mid
    if (at < slot) low = mid + 1
    else high = mid - 1
  }
  return -1
}

/** Documents between two pauses of a bulk load. */
const PAUSE_EVERY = 4096

export class Bm25 {
  /** By term number. */
  private postings: Array<Posting | undefined> = []
  private lengths = new Int32Array(0)
  private documents = 0
  private totalLength = 0
  /** The highest slot added so far: slots must come in increasing order. */
  private lastSlot = -1
  // Query accumulators, by slot; `stamps[slot] === generation` marks a slot scored by the current query.
  private sums = new Float64Array(0)
  private stamps = new Uint32Array(0)
  private reached = new Int32Array(0)
  private generation = 0

  constructor(readonly k1 = 1.2, readonly b = 0.75) {}

  get size() {
    return this.documents
  }

  /**
   * Adds a document at `slot`, higher than every slot added before: its
   * distinct terms and how often each occurs (`counts[i]` for `terms[i]`),
   * and its length in terms.
   */
  add(slot: number, terms: ArrayLike<number>, counts: ArrayLike<number>, distinct: number, length: number) {
    if (slot <= this.lastSlot) throw new Error(`BM25 slots must increase: ${slot} after ${this.lastSlot}`)
    this.lastSlot = slot
    for (let k = 0; k < distinct; k++) {
      const term = terms[k]!
      const count = counts[k]!
      let posting = this.postings[term]
      if (!posting) {
        posting = { slots: new Int32Array(4), counts: new Int32Array(4), length: 0, live: 0 }
        this.postings[term] = posting
      }
      if (posting.length === posting.slots.length) {
        posting.slots = grown(posting.slots, posting.length + 1, (n) => new Int32Array(n))
        posting.counts = grown(posting.counts, posting.length + 1, (n) => new Int32Array(n))
      }
      posting.slots[posting.length] = slot
      posting.counts[posting.length++] = count
      posting.live++
    }
    this.lengths = grown(this.lengths, slot + 1, (n) => new Int32Array(n))
    this.lengths[slot] = length
    this.documents++
    this.totalLength += length
  }

  /**
   * Fills an empty index with `count` documents at slots 0..count-1 at once:
   * `termsOf(slot, out)` writes every term of the document, in order, into
   * `out` from its start (growing it by answering a larger array when it is
   * too small) and answers `[terms, out]`. Each posting is made at its final
   * size (a count of its documents first), instead of grown one document at
   * a time. A generator: it pauses every few thousand documents (the caller
   * decides whether to give pending I/O a turn).
   */
  *bulk(count: number, terms: number, termsOf: (slot: number, out: Int32Array) => readonly [number, Int32Array]): Generator<void, void> {
    this.adopt(yield* bulkPostings(count, terms, termsOf))
  }

  /** Takes postings built by `bulkPostings` (here or on another thread) as the whole of an empty index. */
  adopt(built: BulkPostings) {
    if (this.lastSlot >= 0) throw new Error("BM25 bulk load into a non-empty index")
    const { counts, lengths, slots, termStarts } = built
    const count = lengths.length
    for (let term = 1; term < termStarts.length - 1; term++) {
      const from = termStarts[term]!
      const size = termStarts[term + 1]! - from
      if (size > 0) {
        this.postings[term] = { slots: slots.subarray(from, from + size), counts: counts.subarray(from, from + size), length: size, live: size }
      }
    }
    this.lengths = new Int32Array(Math.max(count, 64))
    this.lengths.set(lengths)
    this.totalLength = built.totalLength
    this.documents = count
    this.lastSlot = count - 1
  }

  /** Removes the document at `slot`, whose distinct terms are `docTerms`. */
  remove(slot: number, docTerms: Iterable<number>) {
    for (const term of docTerms) {
      const posting = this.postings[term]
      if (!posting) continue
      const at = find(posting, slot)
      if (at < 0) continue
      posting.slots[at] = HOLE
      posting.live--
      if (posting.live === 0) this.postings[term] = undefined
      else if (posting.length - posting.live > Math.max(16, posting.live)) this.compact(posting)
    }
    this.totalLength -= this.lengths[slot]!
    this.lengths[slot] = 0
    this.documents--
  }

  /** Closes a posting's holes, keeping its order. */
  private compact(posting: Posting) {
    let write = 0
    for (let read = 0; read < posting.length; read++) {
      const slot = posting.slots[read]!
      if (slot === HOLE) continue
      posting.slots[write] = slot
      posting.counts[write++] = posting.counts[read]!
    }
    posting.length = write
  }

  /**
   * Renumbers slots (`renumber[old]` is the new slot, -1 for none), keeping
   * every posting's order: what the owner does when it closes the holes
   * removed documents left among the slots.
   */
  renumber(renumber: Int32Array, slots: number) {
    for (const posting of this.postings) {
      if (posting === undefined) continue
      let write = 0
      for (let read = 0; read < posting.length; read++) {
        const old = posting.slots[read]!
        const now = old === HOLE ? -1 : renumber[old]!
        if (now < 0) continue
        posting.slots[write] = now
        posting.counts[write++] = posting.counts[read]!
      }
      posting.length = write
    }
    const lengths = new Int32Array(Math.max(slots, 64))
    for (let old = 0; old < renumber.length; old++) if (renumber[old]! >= 0) lengths[renumber[old]!] = this.lengths[old]!
    this.lengths = lengths
    this.lastSlot = slots - 1
    this.sums = new Float64Array(0)
    this.stamps = new Uint32Array(0)
    this.reached = new Int32Array(0)
  }

  /** Inverse document frequency of a term (undefined: one no document holds, which gets the rarest value). */
  idf(term: number | undefined) {
    const n = this.documents
    const df = term === undefined ? 0 : this.postings[term]?.live ?? 0
    return Math.log(1 + (n - df + 0.5) / (df + 0.5))
  }

  /**
   * Scores of every slot matching at least one query term and admitted by
   * `admit` (every slot when undefined), accumulated term by term.
   */
  score(queryTerms: ReadonlyArray<number>, admit?: (slot: number) => boolean): KeywordScores {
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
        const posting = this.postings[term]
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

/**
 * Every term's posting for documents 0 to `count - 1` at once, as plain
 * arrays: term t's entries are `slots` and `counts` from `termStarts[t]` to
 * `termStarts[t + 1]`, ascending by slot. What adding each document in turn
 * would build, made without a map; pure, so another thread can make it.
 */
export interface BulkPostings {
  readonly lengths: Int32Array<ArrayBuffer>
  readonly totalLength: number
  readonly termStarts: Int32Array<ArrayBuffer>
  readonly slots: Int32Array<ArrayBuffer>
  readonly counts: Int32Array<ArrayBuffer>
}

export function* bulkPostings(
  count: number,
  terms: number,
  termsOf: (slot: number, out: Int32Array) => readonly [number, Int32Array]
): Generator<void, BulkPostings> {
  const documentsOf = new Int32Array(terms + 1)
  const byTerm = new Int32Array(terms + 1)
  // Pass 1: each document's distinct terms and counts, kept in order; every term's number of documents.
  let pairs = new Int32Array(Math.max(1024, count * 32))
  let used = 0
  const firstPair = new Int32Array(count + 1)
  const lengths = new Int32Array(count)
  let totalLength = 0
  let docTerms: Int32Array = new Int32Array(1024)
  for (let slot = 0; slot < count; slot++) {
    firstPair[slot] = used / 2
    const [length, out] = termsOf(slot, docTerms)
    docTerms = out
    if (used + length * 2 > pairs.length) {
      const bigger = new Int32Array(Math.max(pairs.length * 2, used + length * 2))
      bigger.set(pairs)
      pairs = bigger
    }
    // A term's first occurrence takes its pair; the count is filled in after.
    for (let i = 0; i < length; i++) {
      const term = docTerms[i]!
      if (byTerm[term] === 0) {
        pairs[used] = term
        used += 2
      }
      byTerm[term]!++
    }
    for (let k = firstPair[slot]! * 2; k < used; k += 2) {
      const term = pairs[k]!
      pairs[k + 1] = byTerm[term]!
      byTerm[term] = 0
      documentsOf[term]!++
    }
    lengths[slot] = length
    totalLength += length
    if ((slot + 1) % PAUSE_EVERY === 0) yield
  }
  firstPair[count] = used / 2
  // Pass 2: each term's entries in one run of the shared arrays, filled in slot order (so ascending).
  const termStarts = new Int32Array(terms + 2)
  for (let term = 1; term <= terms; term++) termStarts[term + 1] = termStarts[term]! + documentsOf[term]!
  const filled = termStarts.slice(0, terms + 1)
  const entries = termStarts[terms + 1]!
  const slots = new Int32Array(entries)
  const counts = new Int32Array(entries)
  for (let slot = 0; slot < count; slot++) {
    for (let k = firstPair[slot]!; k < firstPair[slot + 1]!; k++) {
      const at = filled[pairs[2 * k]!]!++
      slots[at] = slot
      counts[at] = pairs[2 * k + 1]!
    }
    if ((slot + 1) % PAUSE_EVERY === 0) yield
  }
  return { lengths, totalLength, termStarts, slots, counts }
}
