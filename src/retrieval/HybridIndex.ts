/**
 * One space's search index: BM25, vector similarity and (given word vectors)
 * soft term matching fused on z-normalised scores, then (in `accurate` mode)
 * what the data rewards: the best nearby same-group neighbour, entity
 * overlap, and dates the query names.
 *
 * A document is held as typed columns by slot, its words as word numbers of
 * the space's lexicon (`Lexicon.ts`), never as objects: a space of a million
 * memories costs a few hundred bytes each. Slots are given out in increasing
 * order; a document whose words change moves to a new slot, and the holes
 * removed documents leave are closed now and then (`onRenumber` tells the owner).
 */
import { Either } from "effect"
import { Admission } from "./Admission.ts"
import { deriveVectors, partTable } from "./BulkVectors.ts"
import { normalize } from "../../services/embedder/Embedder.ts"
import { Bm25 } from "./Bm25.ts"
import { grown } from "./Grown.ts"
import { Lexicon, packWords, samePacked, termNumbers, type WordPart, wordNumbers } from "./Lexicon.ts"
import { queryDates, settleSpans } from "./QueryDates.ts"
import { SoftMatcher, type WordVectors } from "./SoftMatch.ts"
import { endsAsking, stem, terms } from "./Text.ts"
import { TopK } from "./TopK.ts"
import { VectorIndex } from "./VectorIndex.ts"
import type { BulkPostings } from "./Bm25.ts"
import { type PartsAhead, THREAD_SHARE, type WakeThread } from "./WakeThread.ts"
import { PartSums } from "./VectorKernel.ts"

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
  /** Who said it (`speakerOf`), when known: a question that names some speakers ranks what others said below. */
  readonly speaker?: string | null | undefined
}

/** A document as the index keeps it: its words already numbered and packed (what a snapshot holds). */
export interface PlacedDoc {
  readonly id: string
  readonly words: Uint8Array
  readonly vector: Float32Array | undefined
  readonly entities: ReadonlyArray<string>
  readonly eventTime: number | null
  readonly groupKey: string | null
  readonly position: number
  readonly active: boolean
  readonly superseded: boolean
  readonly asks: boolean
  /** Its text ends with a question (`endsAsking`): the turn after it may answer it. */
  readonly endsAsking: boolean
  /** Lower-cased. */
  readonly speaker: string | null
}

/** An empty index's documents all at once (a snapshot read back), slot i for the i-th. */
export interface BulkDocs {
  readonly ids: ReadonlyArray<string>
  /** Every document's packed words, one after the other; document i's end at `wordEnds[i]`. */
  readonly words: Uint8Array
  readonly wordEnds: Int32Array
  /** Document i's stored vector at [i * dims, (i + 1) * dims), where `hasVector[i]`; else made from words when the embedder does so. */
  readonly vectors: Float32Array | undefined
  readonly hasVector: Uint8Array
  readonly dims: number
  readonly entities: ReadonlyArray<ReadonlyArray<string>>
  /** NaN for none. */
  readonly eventTimes: Float64Array
  /** Group numbers into `groupKeys`, -1 for none. */
  readonly groups: Int32Array
  readonly groupKeys: ReadonlyArray<string>
  readonly positions: Int32Array
  readonly active: Uint8Array
  readonly superseded: Uint8Array
  readonly asks: Uint8Array
  readonly endsAsking: Uint8Array
  /** Lower-cased, null for none. */
  readonly speakers: ReadonlyArray<string | null>
}

export interface HybridQuery {
  readonly text: string
  readonly vector?: Float32Array | undefined
  readonly referenceTime?: number | undefined
  readonly mode: "fast" | "accurate"
  readonly limit: number
  readonly candidateCap?: number | undefined
  /** Narrows the active memories a query may return (given each one's id and slot); undefined admits them all. */
  readonly eligible?: ((id: string, slot: number) => boolean) | undefined
  /**
   * Memories ranked apart (a space's notes beside its facts): they take no
   * place in the others' candidates nor in the statistics their scores are
   * normalised by, so the others rank as they would without them; the best
   * of them join after, scored on the same scale.
   */
  readonly apart?: ((slot: number) => boolean) | undefined
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
  /**
   * How much more the turn just before counts when it ends with a question: the turn answers it. Learned as `date`
   * was (scripts/tune-weights.ts, each half of the dev file gains at 1.2-1.6).
   */
  answer: 1.4,
  entity: 0.25,
  /**
   * Subtracted from a memory outside every time a question names. Learned (scripts/tune-weights.ts): both halves of
   * the dev file, each trained on alone, chose 2.0 over the 0.6 set by hand before.
   */
  date: 2,
  /** Subtracted from what someone else said when a question names some of a space's speakers. */
  speaker: 2,
  /** Subtracted from a superseded fact's score, in the fused score's units. */
  superseded: 1,
  /** Subtracted from the score of a memory that only asks. */
  asks: 2
}

export interface HybridIndexOptions {
  /**
   * A word's part of a sentence vector, when the embedder makes a text's vector
   * from its words alone: a document given without a vector gets the
   * normalised sum of its text's word parts (what the embedder would answer).
   */
  readonly wordPart?: ((word: string) => WordPart | undefined) | undefined
  /** The length of those vectors (a text none of whose words has a part gets zeros, as the embedder answers). */
  readonly dimensions?: number | undefined
  /** Called when slots are renumbered (`renumber[old]` is the new slot or -1), before the call that caused it returns. */
  readonly onRenumber?: ((renumber: Int32Array, slots: number) => void) | undefined
}

/** How many of the best candidates bring their neighbours into the pool (accurate mode). */
const EXPANSION = 30
/** Documents a bulk load goes through between two pauses. */
const BULK_PAUSE = 16384
/** Group positions this close are neighbours: in a dialogue, a speaker's previous turn is two back. */
const REACH = 2
/** Holes are closed once they are this many and a quarter of the slots. */
const COMPACT_AT = 4096

const SUPERSEDED = 1
const ASKS = 2
const LIVE = 4
const ENDS_ASKING = 8

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x))

/** The words of a name or question, in any script ("José", "O'Brien" as "o" and "brien"). */
const wordsOf = (text: string): ReadonlyArray<string> => text.match(/[\p{L}\p{N}]+/gu) ?? []

/** Standardises values against the mean and spread of `sample`. */
const zScore = (sample: ReadonlyArray<number>) => {
  const mean = sample.reduce((a, b) => a + b, 0) / sample.length
  const sd = Math.sqrt(sample.reduce((a, b) => a + (b - mean) * (b - mean), 0) / sample.length) || 1
  return (x: number) => (x - mean) / sd
}

const sameList = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string>) =>
  a !== undefined && a.length === b.length && a.every((x, i) => x === b[i])

/** Positions written in a table up to this one (positions run from 0 in the order of writing); beyond, in a map. */
const TABLE_POSITIONS = 1 << 26

/**
 * The slot at each position: a table by position (4 bytes each, slot + 1,
 * 0 for none) rather than a map of a million entries (about 40 bytes each).
 */
class PositionSlots {
  private table = new Int32Array(0)
  private readonly far = new Map<number, number>()

  get(position: number): number | undefined {
    if (position < 0 || position >= TABLE_POSITIONS) return this.far.get(position)
    const held = position < this.table.length ? this.table[position]! : 0
    return held === 0 ? undefined : held - 1
  }

  set(position: number, slot: number) {
    if (position < 0 || position >= TABLE_POSITIONS) this.far.set(position, slot)
    else {
      this.table = grown(this.table, position + 1, (n) => new Int32Array(n))
      this.table[position] = slot + 1
    }
  }

  delete(position: number) {
    if (position < 0 || position >= TABLE_POSITIONS) this.far.delete(position)
    else if (position < this.table.length) this.table[position] = 0
  }

  /** Every slot renumbered (`renumber[old]`; none is dropped: a slot is released from its position before). */
  renumber(renumber: Int32Array) {
    for (let position = 0; position < this.table.length; position++) {
      const held = this.table[position]!
      if (held !== 0) this.table[position] = renumber[held - 1]! + 1
    }
    for (const [position, slot] of this.far) this.far.set(position, renumber[slot]!)
  }
}

export class HybridIndex {
  readonly lexicon: Lexicon
  private readonly derives: boolean
  private readonly dimensions: number
  private readonly onRenumber: ((renumber: Int32Array, slots: number) => void) | undefined
  private readonly slotOf = new Map<string, number>()
  private ids: Array<string | undefined> = []
  private next = 0
  private dead = 0
  // Packed words of every slot, one arena: slot s's bytes are bytes[starts[s], ends[s]).
  private bytes: Uint8Array = new Uint8Array(1 << 16)
  private used = 0
  private starts = new Int32Array(0)
  private ends = new Int32Array(0)
  private entityLists: Array<ReadonlyArray<string> | undefined> = []
  private speakers: Array<string | null | undefined> = []
  private eventTimes = new Float64Array(0)
  private groupOf = new Int32Array(0)
  private positions = new Int32Array(0)
  private flags = new Uint8Array(0)
  private readonly groupIds = new Map<string, number>()
  private groupKeys: Array<string> = []
  /** Whether `groupIds` lacks the keys of a bulk load (it is made at the first write after one, not during the wake). */
  private groupIdsStale = false
  /** Slot at each position (the latest placed); others at the same position wait in `crowded`. */
  private bySlotPosition = new PositionSlots()
  private readonly crowded = new Map<number, Array<number>>()
  private readonly bm25 = new Bm25()
  private readonly vectors = new VectorIndex()
  private readonly admission = new Admission()

  /** Without `wordVectors` there is no soft term matching: BM25 and sentence vectors only. */
  constructor(private readonly wordVectors?: WordVectors, options: HybridIndexOptions = {}) {
    this.lexicon = new Lexicon(wordVectors, options.wordPart)
    this.derives = options.wordPart !== undefined
    this.dimensions = options.dimensions ?? 0
    this.onRenumber = options.onRenumber
  }

  /** The word parts of the lexicon's words, as the vector kernel sums them (made at the first vector made from words). */
  private partSums: PartSums | undefined
  private partIds = new Int32Array(256)
  // A document's terms counted without a map: counts by term number, and the terms touched, in order.
  private termCounts = new Int32Array(1024)
  private termBuffer: Int32Array = new Int32Array(256)
  /** A document's word numbers, as `termsOf`, `partsOf` and `softVectors` read them (each consumes them before it returns). */
  private wordBuffer: Int32Array = new Int32Array(256)
  private readonly touched: Array<number> = []
  private readonly counts: Array<number> = []

  get size() {
    return this.slotOf.size
  }

  /** One past the highest slot given out. */
  get slotCount() {
    return this.next
  }

  has(id: string) {
    return this.slotOf.has(id)
  }

  slot(id: string): number | undefined {
    return this.slotOf.get(id)
  }

  idAt(slot: number): string | undefined {
    return this.ids[slot]
  }

  /** The ids in slot order. */
  *liveIds(): IterableIterator<string> {
    for (let slot = 0; slot < this.next; slot++) {
      const id = this.ids[slot]
      if (id !== undefined) yield id
    }
  }

  /**
   * Adds or replaces a document; answers its slot. A replacement whose words,
   * entities, group and position are its predecessor's (a fact settled or
   * superseded, a memory retired or its tags changed) keeps its slot and
   * what was derived from its words.
   */
  upsert(doc: IndexDoc): number {
    const lexicon = this.lexicon
    return this.place({
      id: doc.id,
      words: packWords(lexicon.encode(doc.text), lexicon.encode(doc.keywordExtra ?? "")),
      vector: doc.vector,
      entities: [...new Set(doc.entities.map((e) => e.toLowerCase()))],
      eventTime: doc.eventTime,
      groupKey: doc.groupKey,
      position: doc.position,
      active: doc.active !== false,
      superseded: doc.superseded === true,
      asks: doc.asks === true,
      endsAsking: endsAsking(doc.text),
      speaker: doc.speaker == null ? null : doc.speaker.toLowerCase()
    })
  }

  /**
   * Adds or replaces a document whose words are already numbered (a
   * snapshot's, or `upsert`'s). Without a vector, one is made from its words
   * when the embedder makes vectors so.
   */
  place(doc: PlacedDoc): number {
    const previous = this.slotOf.get(doc.id)
    const group = doc.groupKey === null ? -1 : this.groupId(doc.groupKey)
    const kept = previous !== undefined && samePacked(this.bytes, this.starts[previous]!, this.ends[previous]!, doc.words) &&
      sameList(this.entityLists[previous], doc.entities) && this.groupOf[previous] === group && this.positions[previous] === doc.position
    let slot: number
    if (kept) {
      slot = previous
    } else {
      if (previous !== undefined) this.vacate(previous)
      slot = this.next++
      this.ensureSlots(slot + 1)
      this.ids[slot] = doc.id
      this.slotOf.set(doc.id, slot)
      this.store(slot, doc.words)
      this.entityLists[slot] = doc.entities
      this.groupOf[slot] = group
      this.positions[slot] = doc.position
      this.addTerms(slot, doc.words)
      this.holdPosition(slot, doc.position)
    }
    this.eventTimes[slot] = doc.eventTime ?? Number.NaN
    this.speakers[slot] = doc.speaker
    this.flags[slot] = LIVE | (doc.superseded ? SUPERSEDED : 0) | (doc.asks ? ASKS : 0) | (doc.endsAsking ? ENDS_ASKING : 0)
    this.admission.setActive(slot, doc.active)
    const vector = doc.vector ?? (this.derives ? this.derive(doc.words) : undefined)
    if (vector) this.vectors.set(slot, vector)
    else this.vectors.delete(slot)
    if (!kept && previous !== undefined) this.compactIfSparse()
    // Closing holes may have renumbered it.
    return this.slotOf.get(doc.id)!
  }

  /** Counts a document's terms (in first-occurrence order) into the keyword statistics. */
  private addTerms(slot: number, words: Uint8Array) {
    const { counts, lexicon, touched } = this
    if (this.termCounts.length <= lexicon.terms) this.termCounts = grown(this.termCounts, lexicon.terms + 1, (n) => new Int32Array(n))
    const byTerm = this.termCounts
    const [length, terms] = this.termsOf(words, 0, words.length, this.termBuffer)
    this.termBuffer = terms
    touched.length = 0
    for (let i = 0; i < length; i++) {
      const term = terms[i]!
      if (byTerm[term] === 0) touched.push(term)
      byTerm[term]!++
    }
    counts.length = touched.length
    for (let k = 0; k < touched.length; k++) {
      counts[k] = byTerm[touched[k]!]!
      byTerm[touched[k]!] = 0
    }
    this.bm25.add(slot, touched, counts, touched.length, length)
  }

  /**
   * The BM25 terms of the words in `bytes[start, end)`, in order, written into
   * `out` from its start (a larger array answered when it is too small):
   * `[how many, the array]`.
   */
  private termsOf(bytes: Uint8Array, start: number, end: number, out: Int32Array): readonly [number, Int32Array] {
    const [length, terms, words] = termNumbers(bytes, start, end, this.lexicon.termsByWord, this.wordBuffer, out)
    this.wordBuffer = words
    return [length, terms]
  }

  /**
   * The normalised sum of the word parts of a document's text (its
   * keyword-only words take no part), in order, each step rounded to float32
   * as a Float32Array sum is: the vector the embedder answers, bit for bit.
   */
  private derive(words: Uint8Array): Float32Array {
    const count = this.partsOf(words, 0, words.length, 0)
    return normalize(this.partSums!.sum(this.partIds, count))
  }

  setVector(id: string, vector: Float32Array) {
    const slot = this.slotOf.get(id)
    if (slot !== undefined) this.vectors.set(slot, vector)
  }

  remove(id: string) {
    const slot = this.slotOf.get(id)
    if (slot === undefined) return
    this.vacate(slot)
    this.compactIfSparse()
  }

  /** A slot's document as the index keeps it (what a snapshot writes); undefined for a free slot. */
  placedAt(slot: number): PlacedDoc | undefined {
    const id = this.ids[slot]
    if (id === undefined) return undefined
    const eventTime = this.eventTimes[slot]!
    const group = this.groupOf[slot]!
    return {
      id,
      words: this.bytes.subarray(this.starts[slot]!, this.ends[slot]!),
      vector: this.vectors.vectorAt(slot),
      entities: this.entityLists[slot] ?? [],
      eventTime: Number.isNaN(eventTime) ? null : eventTime,
      groupKey: group < 0 ? null : this.groupKeys[group]!,
      position: this.positions[slot]!,
      active: this.admission.isActive(slot),
      superseded: (this.flags[slot]! & SUPERSEDED) !== 0,
      asks: (this.flags[slot]! & ASKS) !== 0,
      endsAsking: (this.flags[slot]! & ENDS_ASKING) !== 0,
      speaker: this.speakers[slot] ?? null
    }
  }

  /** Room for `slots` more documents whose packed words take `bytes`: an index read back whole grows once. */
  reserve(slots: number, bytes: number) {
    this.ensureSlots(this.next + slots)
    this.vectors.reserve(this.next + slots)
    if (this.used + bytes > this.bytes.length) {
      const bigger = new Uint8Array(this.used + bytes)
      bigger.set(this.bytes.subarray(0, this.used))
      this.bytes = bigger
    }
  }

  /**
   * Starts building, on `thread`, the postings and most vectors of the
   * documents whose packed words are `bytes` (document n's end at
   * `wordEnds[n]`), for the `bulkLoad` of those documents that follows: the
   * lexicon must already hold their words.
   */
  *buildAhead(thread: WakeThread, bytes: Uint8Array, wordEnds: Int32Array): Generator<void, PartsAhead> {
    const count = wordEnds.length
    const starts = new Int32Array(count)
    for (let slot = 1; slot < count; slot++) starts[slot] = wordEnds[slot - 1]!
    const postings = thread.words({
      type: "words",
      bytes: bytes.slice(),
      starts,
      ends: wordEnds.slice(),
      termOfWord: this.lexicon.termTable(),
      terms: this.lexicon.terms
    })
    if (!this.derives || count === 0) return { postings, vectors: undefined }
    yield
    // The thread builds the postings meanwhile.
    const to = Math.round(count * THREAD_SHARE)
    const parts = yield* partTable(this.lexicon, this.dimensions)
    // Each chunk goes into the index as it comes (between two steps of the wake), so no thread holds them all.
    this.vectors.reserve(count)
    const dims = this.dimensions
    const made = thread.vectors({ type: "vectors", dims, from: 0, to, ...parts }, (from, vectors, codes, scales) =>
      this.vectors.setMany(from, vectors.length / dims, dims, vectors, codes, scales))
    return { postings, vectors: { from: 0, to, made } }
  }

  /**
   * Fills an empty index with every document of a snapshot at once: arrays
   * taken whole, keyword postings built at their final sizes, vectors made
   * from words (or stored ones copied). The index is what upserting each
   * document in order would have made.
   */
  *bulkLoad(docs: BulkDocs, ahead?: PartsAhead): Generator<void | Promise<void>, void> {
    if (this.next > 0) throw new Error("bulk load into a non-empty index")
    const count = docs.ids.length
    this.ids = [...docs.ids]
    for (let slot = 0; slot < count; slot++) {
      this.slotOf.set(docs.ids[slot]!, slot)
      if ((slot + 1) % BULK_PAUSE === 0) yield
    }
    // A copy: the words given are a view of a snapshot's whole body, which would otherwise stay in memory.
    this.bytes = docs.words.length > 0 ? docs.words.slice() : new Uint8Array(1 << 16)
    this.used = docs.words.length
    this.ensureSlots(count)
    for (let slot = 0, start = 0; slot < count; slot++) {
      this.starts[slot] = start
      this.ends[slot] = start = docs.wordEnds[slot]!
    }
    this.next = count
    this.eventTimes.set(docs.eventTimes.subarray(0, count))
    this.positions.set(docs.positions.subarray(0, count))
    // Into an empty index, the groups keep their numbers.
    this.groupKeys = [...docs.groupKeys]
    this.groupIds.clear()
    this.groupIdsStale = this.groupKeys.length > 0
    for (let slot = 0; slot < count; slot++) {
      const group = docs.groups[slot]!
      this.groupOf[slot] = group < 0 ? -1 : group
      this.flags[slot] = LIVE | (docs.superseded[slot] ? SUPERSEDED : 0) | (docs.asks[slot] ? ASKS : 0) |
        (docs.endsAsking[slot] ? ENDS_ASKING : 0)
      if (docs.active[slot] === 0) this.admission.setActive(slot, false)
      this.holdPosition(slot, docs.positions[slot]!)
      if ((slot + 1) % BULK_PAUSE === 0) yield
    }
    this.entityLists = [...docs.entities]
    this.speakers = [...docs.speakers]
    const { bytes, lexicon, starts, ends } = this
    yield
    this.vectors.reserve(count)
    // A snapshot keeps either every vector (an embedder's) or none (made from words).
    const derived: Array<number> = []
    for (let slot = 0; slot < count; slot++) {
      if (docs.hasVector[slot] === 1 && docs.vectors !== undefined) {
        this.vectors.set(slot, docs.vectors.subarray(slot * docs.dims, (slot + 1) * docs.dims))
      } else if (this.derives) derived.push(slot)
    }
    const slots = Int32Array.from(derived)
    /** Makes the vectors of `slots[from, to)` here. */
    const here = function*(index: HybridIndex, from: number, to = slots.length): Generator<void, void> {
      if (to <= from) return
      const sums = (index.partSums ??= new PartSums(index.dimensions))
      yield* deriveVectors({ bytes, starts, ends, slots: slots.subarray(from, to) }, index.dimensions, (word) => lexicon.part(word), sums,
        (k, vector) => index.vectors.set(slots[from + k]!, vector))
    }
    if (ahead !== undefined) {
      // A snapshot made from words has no vector stored: the thread's are of the first documents.
      const shared = ahead.vectors !== undefined && ahead.vectors.from === 0 && ahead.vectors.to <= slots.length &&
        (slots.length === 0 || slots[slots.length - 1] === slots.length - 1)
      const threadMakes = shared ? ahead.vectors!.to : 0
      yield* here(this, threadMakes)
      let postings: Either.Either<BulkPostings, string> = Either.left("no answer")
      let vectors: Either.Either<void, string> = Either.right(undefined)
      yield ahead.postings.then((answer) => {
        postings = answer
      })
      if (threadMakes > 0) {
        yield ahead.vectors!.made.then((answer) => {
          vectors = answer
        })
      }
      if (Either.isRight(postings) && Either.isRight(vectors)) {
        this.bm25.adopt(postings.right)
        return
      }
      this.wakeThreadFailure = Either.isLeft(postings) ? postings.left : Either.isLeft(vectors) ? vectors.left : "no answer"
      yield* this.bm25.bulk(count, lexicon.terms, (slot, out) => this.termsOf(bytes, starts[slot]!, ends[slot]!, out))
      return yield* here(this, 0, threadMakes)
    }
    yield* this.bm25.bulk(count, lexicon.terms, (slot, out) => this.termsOf(bytes, starts[slot]!, ends[slot]!, out))
    yield* here(this, 0)
  }

  /** Why the last bulk load built its postings and vectors here though given a thread's (it failed), if it did. */
  wakeThreadFailure: string | undefined

  /**
   * Appends to `partIds` from `at` the word numbers of the words in
   * `bytes[start, end)` that have parts (up to the separator), giving the
   * kernel each word's part the first time; answers where the next go.
   */
  private partsOf(bytes: Uint8Array, start: number, end: number, at: number): number {
    const sums = (this.partSums ??= new PartSums(this.dimensions))
    const [textWords, words] = wordNumbers(bytes, start, end, this.wordBuffer, true)
    this.wordBuffer = words
    let count = at
    for (let k = 0; k < textWords; k++) {
      const word = words[k]!
      if (!sums.has(word)) {
        const part = this.lexicon.part(word)
        if (part === undefined) continue
        sums.set(word, part.weight, part.vector)
      }
      if (count === this.partIds.length) {
        const bigger = new Int32Array(this.partIds.length * 2)
        bigger.set(this.partIds)
        this.partIds = bigger
      }
      this.partIds[count++] = word
    }
    return count
  }

  private groupId(key: string) {
    if (this.groupIdsStale) {
      this.groupIdsStale = false
      this.groupKeys.forEach((known, id) => this.groupIds.set(known, id))
    }
    let id = this.groupIds.get(key)
    if (id === undefined) {
      id = this.groupKeys.length
      this.groupIds.set(key, id)
      this.groupKeys.push(key)
    }
    return id
  }

  private ensureSlots(size: number) {
    if (size <= this.starts.length) return
    this.starts = grown(this.starts, size, (n) => new Int32Array(n))
    this.ends = grown(this.ends, size, (n) => new Int32Array(n))
    this.eventTimes = grown(this.eventTimes, size, (n) => new Float64Array(n))
    this.groupOf = grown(this.groupOf, size, (n) => new Int32Array(n))
    this.positions = grown(this.positions, size, (n) => new Int32Array(n))
    this.flags = grown(this.flags, size, (n) => new Uint8Array(n))
  }

  private store(slot: number, words: Uint8Array) {
    if (this.used + words.length > this.bytes.length) {
      const bigger = new Uint8Array(Math.max(this.bytes.length * 2, this.used + words.length))
      bigger.set(this.bytes.subarray(0, this.used))
      this.bytes = bigger
    }
    this.bytes.set(words, this.used)
    this.starts[slot] = this.used
    this.used += words.length
    this.ends[slot] = this.used
  }

  private holdPosition(slot: number, position: number) {
    const held = this.bySlotPosition.get(position)
    if (held === undefined) this.bySlotPosition.set(position, slot)
    else {
      // The latest placed answers for the position; the others stay reachable as neighbours too.
      const others = this.crowded.get(position) ?? []
      others.push(held)
      this.crowded.set(position, others)
      this.bySlotPosition.set(position, slot)
    }
  }

  private releasePosition(slot: number, position: number) {
    const others = this.crowded.get(position)
    if (this.bySlotPosition.get(position) === slot) {
      const next = others?.pop()
      if (next === undefined) this.bySlotPosition.delete(position)
      else this.bySlotPosition.set(position, next)
    } else if (others) {
      const at = others.indexOf(slot)
      if (at >= 0) others.splice(at, 1)
    }
    if (others?.length === 0) this.crowded.delete(position)
  }

  /** The distinct BM25 terms of a slot's words. */
  private termsAt(slot: number) {
    const [count, terms] = this.termsOf(this.bytes, this.starts[slot]!, this.ends[slot]!, this.termBuffer)
    this.termBuffer = terms
    return new Set(terms.subarray(0, count))
  }

  /** Frees a slot: its words leave the keyword statistics, its vector and position go. */
  private vacate(slot: number) {
    this.bm25.remove(slot, this.termsAt(slot))
    this.vectors.delete(slot)
    this.releasePosition(slot, this.positions[slot]!)
    this.admission.setActive(slot, true)
    this.slotOf.delete(this.ids[slot]!)
    this.ids[slot] = undefined
    this.entityLists[slot] = undefined
    this.speakers[slot] = undefined
    this.flags[slot] = 0
    this.dead++
  }

  /** Closes the holes once they are many: every slot renumbered in order, every structure with it. */
  private compactIfSparse() {
    if (this.dead < COMPACT_AT || this.dead * 4 < this.next) return
    const renumber = new Int32Array(this.next).fill(-1)
    let count = 0
    for (let slot = 0; slot < this.next; slot++) if (this.ids[slot] !== undefined) renumber[slot] = count++
    const bytes = new Uint8Array(Math.max(1 << 16, this.used))
    let used = 0
    const starts = new Int32Array(Math.max(count, 64))
    const ends = new Int32Array(Math.max(count, 64))
    const move = <A extends Int32Array | Float64Array | Uint8Array>(array: A, make: (n: number) => A) => {
      const moved = make(Math.max(count, 64))
      for (let old = 0; old < this.next; old++) if (renumber[old]! >= 0) moved[renumber[old]!] = array[old]!
      return moved
    }
    for (let old = 0; old < this.next; old++) {
      const now = renumber[old]!
      if (now < 0) continue
      const words = this.bytes.subarray(this.starts[old]!, this.ends[old]!)
      bytes.set(words, used)
      starts[now] = used
      used += words.length
      ends[now] = used
    }
    this.bytes = bytes
    this.used = used
    this.starts = starts
    this.ends = ends
    this.eventTimes = move(this.eventTimes, (n) => new Float64Array(n))
    this.groupOf = move(this.groupOf, (n) => new Int32Array(n))
    this.positions = move(this.positions, (n) => new Int32Array(n))
    this.flags = move(this.flags, (n) => new Uint8Array(n))
    const ids: Array<string | undefined> = new Array(count)
    const entityLists: Array<ReadonlyArray<string> | undefined> = new Array(count)
    const speakers: Array<string | null | undefined> = new Array(count)
    for (let old = 0; old < this.next; old++) {
      const now = renumber[old]!
      if (now < 0) continue
      ids[now] = this.ids[old]
      entityLists[now] = this.entityLists[old]
      speakers[now] = this.speakers[old]
      this.slotOf.set(this.ids[old]!, now)
    }
    this.ids = ids
    this.entityLists = entityLists
    this.speakers = speakers
    this.bySlotPosition.renumber(renumber)
    for (const [position, others] of this.crowded) this.crowded.set(position, others.map((slot) => renumber[slot]!))
    this.bm25.renumber(renumber, count)
    this.vectors.renumber(renumber, count)
    this.admission.renumber(renumber, count)
    this.next = count
    this.dead = 0
    this.onRenumber?.(renumber, count)
  }

  /** The admitted memories of `slot`'s group within `REACH` positions, with their distance. */
  private neighbours(slot: number, eligible: (slot: number) => boolean): Array<readonly [slot: number, distance: number]> {
    const group = this.groupOf[slot]!
    const out: Array<readonly [number, number]> = []
    if (group < 0) return out
    const position = this.positions[slot]!
    for (let offset = -REACH; offset <= REACH; offset++) {
      if (offset === 0) continue
      const at = position + offset
      const first = this.bySlotPosition.get(at)
      if (first === undefined) continue
      // Of the memories at that position, the latest placed in this group.
      let found = first !== slot && this.groupOf[first] === group ? first : -1
      if (found < 0) {
        const others = this.crowded.get(at) ?? []
        for (let i = others.length - 1; i >= 0 && found < 0; i--) {
          const other = others[i]!
          if (other !== slot && this.groupOf[other] === group) found = other
        }
      }
      if (found >= 0 && eligible(found)) out.push([found, Math.abs(offset)])
    }
    return out
  }

  /** A slot's soft-match score: its words read as soft word numbers (their bare forms), each looked up once per query. */
  private softScoreOf(slot: number, matcher: SoftMatcher): number {
    const [count, words] = wordNumbers(this.bytes, this.starts[slot]!, this.ends[slot]!, this.wordBuffer, true)
    this.wordBuffer = words
    for (let k = 0; k < count; k++) words[k] = this.lexicon.softWord(words[k]!)
    return matcher.scoreWords(words, count, this.softVector)
  }

  private readonly softVector = (softId: number) => this.lexicon.vector(softId)

  /**
   * Weighted, z-normalised soft-match scores of the pool (a bounded candidate
   * set); a memory outside it scores as the pool's worst.
   */
  private softScores(text: string, pool: ReadonlyArray<number>, apart: ReadonlyArray<number> = []): (slot: number) => number {
    const matcher = this.wordVectors !== undefined && WEIGHTS.soft !== 0
      ? SoftMatcher.forQuery(this.wordVectors, text, (word) => this.bm25.idf(this.lexicon.termIdOf(stem(word))))
      : undefined
    if (!matcher) return () => 0
    const raw = pool.map((slot) => this.softScoreOf(slot, matcher))
    const z = zScore(raw)
    const scores = new Map<number, number>()
    let floor = Infinity
    pool.forEach((slot, i) => {
      const score = WEIGHTS.soft * z(raw[i]!)
      scores.set(slot, score)
      floor = Math.min(floor, score)
    })
    // Memories ranked apart are scored on the pool's scale, and leave its floor alone.
    for (const slot of apart) scores.set(slot, WEIGHTS.soft * z(this.softScoreOf(slot, matcher)))
    return (slot) => scores.get(slot) ?? floor
  }

  search(query: HybridQuery): ReadonlyArray<RankedHit> {
    const cap = query.candidateCap ?? 200
    const filter = query.eligible
    const admit = this.admission.forQuery(
      this.next,
      filter === undefined ? undefined : (slot) => {
        const id = this.ids[slot]
        return id !== undefined && filter(id, slot)
      }
    )
    const apart = query.apart
    const admitMain = apart === undefined ? admit : (slot: number) => !apart(slot) && (admit === undefined || admit(slot))
    const eligible = admitMain ?? (() => true)
    const keyword = this.bm25.score(
      terms(query.text).flatMap((term) => this.lexicon.termIdOf(term) ?? []),
      admit
    )
    // The best `cap` by score, ties in the order BM25 reached them (a stable sort's order).
    const keywordBest = new TopK(Math.max(cap, 0))
    const apartKeywordBest = new TopK(apart === undefined ? 0 : Math.max(cap, 0))
    for (let i = 0; i < keyword.count; i++) {
      const slot = keyword.slots[i]!
      const score = keyword.of(slot)
      const best = apart !== undefined && apart(slot) ? apartKeywordBest : keywordBest
      if (best.wouldKeep(score)) best.offer(slot, score)
    }
    const keywordTop = keywordBest.entries()
    const scans = query.vector === undefined
      ? undefined
      : this.vectors.scanApart(
        query.vector,
        apart === undefined
          ? [{ k: cap, admit }]
          : [{ k: cap, admit: admitMain }, { k: cap, admit: (slot: number) => apart(slot) && (admit === undefined || admit(slot)) }]
      )
    const scan = scans?.[0]
    const vectorTop = scan?.top ?? []
    let pool = [...new Set<number>([...keywordTop.map(([s]) => s), ...vectorTop.map(([s]) => s)])]
    let apartPool = apart === undefined
      ? []
      : [...new Set<number>([...apartKeywordBest.entries().map(([s]) => s), ...(scans?.[1]?.top ?? []).map(([s]) => s)])]
    // Nothing else to rank: those apart are the pool (and its statistics).
    if (pool.length === 0) [pool, apartPool] = [apartPool, []]
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
        for (const [slot] of this.neighbours(leader, eligible)) {
          if (!inPool.has(slot)) {
            inPool.add(slot)
            pool.push(slot)
          }
        }
      }
    }
    const softOf = this.softScores(query.text, pool, apartPool)
    const fused = new Map<number, number>()
    const fusedOf = (slot: number) => {
      let value = fused.get(slot)
      if (value === undefined) fused.set(slot, (value = baseOf(slot) + softOf(slot)))
      return value
    }
    for (const slot of pool) fusedOf(slot)
    // Scored on the pool's scale (its statistics were taken above, without them).
    for (const slot of apartPool) {
      if (!fused.has(slot)) {
        fusedOf(slot)
        pool.push(slot)
      }
    }

    const boosts = new Map<number, number>()
    if (query.mode === "accurate") {
      const queryWords = new Set(wordsOf(query.text.toLowerCase()))
      const namedIn = new Map<string, boolean>()
      const named = (name: string) => {
        let is = namedIn.get(name)
        if (is === undefined) {
          const parts = wordsOf(name)
          namedIn.set(name, (is = parts.length > 0 && parts.every((part) => queryWords.has(part))))
        }
        return is
      }
      const asked = queryDates(query.text, query.referenceTime)
      const spans = asked.some((span) => span.away !== undefined)
        ? settleSpans(asked, pool.map((slot) => this.eventTimes[slot]!).filter((t) => !Number.isNaN(t)))
        : asked
      // A question that names some of the pool's speakers asks what they said: what others said ranks below it
      // (lowered rather than theirs raised, so that scores keep their scale where the question is answered).
      const namesSpeaker = pool.some((slot) => {
        const speaker = this.speakers[slot]
        return speaker != null && named(speaker)
      })
      for (const slot of pool) {
        let near = 0
        for (const [neighbour, distance] of this.neighbours(slot, eligible)) {
          // The turn just before, when it ends with a question, is what this one answers.
          const answered = distance === 1 && (this.flags[neighbour]! & ENDS_ASKING) !== 0 && this.positions[neighbour]! < this.positions[slot]!
          near = Math.max(near, (answered ? WEIGHTS.answer : 1) * WEIGHTS.decay ** (distance - 1) * fusedOf(neighbour))
        }
        let boost = WEIGHTS.neighbour * near
        for (const entity of this.entityLists[slot] ?? []) {
          if (named(entity)) boost += WEIGHTS.entity
        }
        // A question about a time (`queryDates`) lowers what is not of that time, undated memories with it.
        const t = this.eventTimes[slot]!
        if (spans.length > 0 && (Number.isNaN(t) || !spans.some((s) => t >= s.start && t <= s.end))) boost -= WEIGHTS.date
        const speaker = this.speakers[slot]
        if (namesSpeaker && speaker != null && !named(speaker)) boost -= WEIGHTS.speaker
        boosts.set(slot, boost)
      }
    }

    return pool
      .map((slot) => {
        const flags = this.flags[slot]!
        const boost = (boosts.get(slot) ?? 0) - ((flags & SUPERSEDED) !== 0 ? WEIGHTS.superseded : 0) - ((flags & ASKS) !== 0 ? WEIGHTS.asks : 0)
        return { slot, total: fused.get(slot)! + boost, boost }
      })
      .sort((a, b) => b.total - a.total)
      .slice(0, query.limit)
      .map((hit) => ({
        id: this.ids[hit.slot]!,
        score: sigmoid(hit.total),
        bm25: keywordOf(hit.slot),
        vector: vectorOf(hit.slot),
        boost: hit.boost
      }))
  }
}
