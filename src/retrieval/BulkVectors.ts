/**
 * The vectors of many documents made from their words at once (a space woken
 * from its snapshot), each as `HybridIndex` makes one, bit for bit: the
 * normalised sum, in word order, of the parts of the words before the
 * separator. On the main thread a batch at a time between pauses, or, for a
 * large space, all of them on a worker thread while the main thread reads
 * the rest of the snapshot (`WakeThread`).
 */
import { normalize } from "../../services/embedder/Embedder.ts"
import { type Lexicon, type WordPart, wordNumbers } from "./Lexicon.ts"
import { PartSums } from "./VectorKernel.ts"

/** Documents whose vectors the kernel makes in one go. */
export const DERIVE_BATCH = 512

/** Where each document's packed words are: document `slots[k]`'s are `bytes[starts[slot], ends[slot])`. */
export interface WordRanges {
  readonly bytes: Uint8Array
  readonly starts: Int32Array
  readonly ends: Int32Array
  readonly slots: Int32Array
}

/**
 * Makes the vector of each document of `ranges` and hands it to
 * `emit(k, vector)` (k its place in `slots`; the vector is good only until
 * `emit` returns), pausing after each batch. `sums` keeps the parts given to
 * it for later calls.
 */
export function* deriveVectors(
  ranges: WordRanges,
  dims: number,
  partOf: (word: number) => WordPart | undefined,
  sums: PartSums,
  emit: (k: number, vector: Float32Array) => void
): Generator<void, void> {
  const { bytes, ends, slots, starts } = ranges
  let partIds = new Int32Array(4096)
  let words: Int32Array = new Int32Array(256)
  const offsets = new Int32Array(DERIVE_BATCH + 1)
  for (let from = 0; from < slots.length; from += DERIVE_BATCH) {
    const to = Math.min(slots.length, from + DERIVE_BATCH)
    let total = 0
    for (let k = from; k < to; k++) {
      offsets[k - from] = total
      const slot = slots[k]!
      const [count, read] = wordNumbers(bytes, starts[slot]!, ends[slot]!, words, true)
      words = read
      for (let w = 0; w < count; w++) {
        const word = read[w]!
        if (!sums.has(word)) {
          const part = partOf(word)
          if (part === undefined) continue
          sums.set(word, part.weight, part.vector)
        }
        if (total === partIds.length) {
          const bigger = new Int32Array(partIds.length * 2)
          bigger.set(partIds)
          partIds = bigger
        }
        partIds[total++] = word
      }
    }
    offsets[to - from] = total
    const out = sums.sumMany(partIds, offsets, to - from)
    const width = sums.width
    for (let k = from; k < to; k++) emit(k, normalize(out.subarray((k - from) * width, (k - from) * width + dims)))
    yield
  }
}

/** Words looked up between two pauses of `partTable` (a word met for the first time is read from disk). */
const PARTS_BETWEEN_PAUSES = 2048

/** Every word's part of the lexicon, as plain arrays a worker thread can take: NaN weight for a word without one. */
export function* partTable(lexicon: Lexicon, dims: number): Generator<void, { weights: Float64Array<ArrayBuffer>; vectors: Float32Array<ArrayBuffer> }> {
  const size = lexicon.size
  const weights = new Float64Array(size + 1).fill(Number.NaN)
  const vectors = new Float32Array((size + 1) * dims)
  for (let word = 1; word <= size; word++) {
    const part = lexicon.part(word)
    if (part !== undefined) {
      weights[word] = part.weight
      vectors.set(part.vector.subarray(0, dims), word * dims)
    }
    if (word % PARTS_BETWEEN_PAUSES === 0) yield
  }
  return { weights, vectors }
}
