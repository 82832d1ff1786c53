/**
 * What a woken space's index needs that depends only on its documents'
 * words, built on a worker thread (`WakeThread`) while the main thread reads
 * the rest of the snapshot: every keyword posting (`bulkPostings`), then
 * the vectors made from words (`BulkVectors`) of the documents the main
 * thread leaves it. The same functions build them on the main thread, so
 * either way the index is the same, bit for bit.
 *
 * Two messages, in this order: the words (the postings are built from them
 * at once), then the word parts and which documents' vectors to make.
 */
import { Schema } from "effect"
import { bulkPostings, type BulkPostings } from "./Bm25.ts"
import { deriveVectors } from "./BulkVectors.ts"
import { termNumbers, type WordPart } from "./Lexicon.ts"
import { codeWidth, PartSums, quantize } from "./VectorKernel.ts"

const Int32 = Schema.instanceOf(Int32Array)

/** The documents' words (document n's are `bytes[starts[n], ends[n])`) and each word's BM25 term (0: none). */
export const WordsJob = Schema.Struct({
  type: Schema.Literal("words"),
  bytes: Schema.instanceOf(Uint8Array),
  starts: Int32,
  ends: Int32,
  termOfWord: Int32,
  terms: Schema.Int.pipe(Schema.nonNegative())
})
export type WordsJob = typeof WordsJob.Type

/** The vectors of documents `from` to `to - 1` of the words sent before: each word's part (NaN weight: none). */
export const VectorsJob = Schema.Struct({
  type: Schema.Literal("vectors"),
  dims: Schema.Int.pipe(Schema.positive()),
  from: Schema.Int.pipe(Schema.nonNegative()),
  to: Schema.Int.pipe(Schema.nonNegative()),
  weights: Schema.instanceOf(Float64Array),
  vectors: Schema.instanceOf(Float32Array)
})
export type VectorsJob = typeof VectorsJob.Type

export const WakeJob = Schema.Union(WordsJob, VectorsJob)
export type WakeJob = typeof WakeJob.Type

const Postings = Schema.Struct({
  lengths: Int32,
  totalLength: Schema.Number,
  termStarts: Int32,
  slots: Int32,
  counts: Int32
})

/**
 * The answers, in the order of the jobs: the postings; the vectors a chunk
 * at a time (`dims` floats for each document from `from`), then `vectors`
 * when all are sent; `failed` for either.
 */
export const WakeReply = Schema.Union(
  Schema.Struct({ type: Schema.Literal("postings"), postings: Postings }),
  Schema.Struct({
    type: Schema.Literal("chunk"),
    from: Schema.Int.pipe(Schema.nonNegative()),
    vectors: Schema.instanceOf(Float32Array),
    /** The vectors' int8 codes (`codeWidth(dims)` bytes each) and scales, as the scan's first pass reads them. */
    codes: Schema.instanceOf(Int8Array),
    scales: Schema.instanceOf(Float32Array)
  }),
  Schema.Struct({ type: Schema.Literal("vectors") }),
  Schema.Struct({ type: Schema.Literal("failed"), message: Schema.String })
)
export type WakeReply = typeof WakeReply.Type

/** Runs a generator to its end: the thread has nothing else to do. */
const finish = <A>(steps: Generator<void, A>): A => {
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
  }
}

/** Every term's posting of the job's documents, as the thread builds it. */
export const runWordsJob = (job: WordsJob): BulkPostings => {
  const { bytes, ends, starts, termOfWord } = job
  let words: Int32Array = new Int32Array(256)
  const termsOf = (slot: number, out: Int32Array): readonly [number, Int32Array] => {
    const [length, terms, numbers] = termNumbers(bytes, starts[slot]!, ends[slot]!, termOfWord, words, out)
    words = numbers
    return [length, terms]
  }
  return finish(bulkPostings(starts.length, job.terms, termsOf))
}

/** Documents whose vectors go back in one message (a kernel batch): the main thread copies each chunk as it comes, none holds them all. */
export const CHUNK_DOCUMENTS = 512

/**
 * The vectors of documents `from` to `to - 1` of `words`, `dims` floats each,
 * with their int8 codes and scales, handed to `send` a chunk at a time, in order.
 */
export const runVectorsJob = (
  words: WordsJob,
  job: VectorsJob,
  send: (from: number, vectors: Float32Array<ArrayBuffer>, codes: Int8Array<ArrayBuffer>, scales: Float32Array<ArrayBuffer>) => void
) => {
  const { dims, from, to, vectors, weights } = job
  const width = codeWidth(dims)
  const sized = (first: number) => Math.min(CHUNK_DOCUMENTS, Math.max(0, to - first))
  let chunk = new Float32Array(sized(from) * dims)
  let codes = new Int8Array(sized(from) * width)
  let scales = new Float32Array(sized(from))
  let chunkFrom = from
  const partOf = (word: number): WordPart | undefined => {
    const weight = weights[word]
    return weight === undefined || Number.isNaN(weight) ? undefined : { weight, vector: vectors.subarray(word * dims, (word + 1) * dims) }
  }
  const slots = new Int32Array(Math.max(0, to - from))
  for (let k = 0; k < slots.length; k++) slots[k] = from + k
  finish(deriveVectors({ bytes: words.bytes, starts: words.starts, ends: words.ends, slots }, dims, partOf, new PartSums(dims), (k, vector) => {
    const document = from + k
    const at = document - chunkFrom
    chunk.set(vector, at * dims)
    scales[at] = quantize(vector, dims, codes, at * width)
    if (at + 1 === scales.length) {
      send(chunkFrom, chunk, codes, scales)
      chunkFrom = document + 1
      chunk = new Float32Array(sized(chunkFrom) * dims)
      codes = new Int8Array(sized(chunkFrom) * width)
      scales = new Float32Array(sized(chunkFrom))
    }
  }))
}
