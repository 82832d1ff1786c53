/**
 * Soft term matching: each query word scores its best cosine with any word of
 * a document, weighted by the query word's rarity, so "instrument" finds "violin"
 * where BM25 needs the same word and an averaged sentence vector blurs it.
 */
import { isStopword, words } from "./Text.ts"

/** The unit vector of a lower-cased word, or undefined when it has none. */
export type WordVectors = (word: string) => Float32Array | undefined

/** The distinct content words of a text, in the form word vectors know them. */
export const contentWords = (text: string): Array<string> => {
  const out = new Set<string>()
  for (const word of words(text)) {
    const bare = word.replace(/'(s|t|re|ve|ll|d|m)$/, "")
    if (bare.length > 1 && !isStopword(word) && !isStopword(bare)) out.add(bare)
  }
  return [...out]
}

/**
 * Values of one scale: word vectors put "May" near "June" and "2022" near
 * "2019", but one never stands for another. These match exactly or not at all
 * (BM25 and the date boost handle them).
 */
const VALUES = new Set(
  ("january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec " +
    "monday tuesday wednesday thursday friday saturday sunday " +
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand million " +
    "first second third fourth fifth sixth seventh eighth ninth tenth last").split(" ")
)
const isValue = (word: string) => VALUES.has(word) || /\d/.test(word)

/** Cosines up to this score nothing: three in four random pairs of a conversation's words fall below it in GloVe. */
const UNRELATED = 0.3

/** The vectors of a text's content words, as a document keeps them for soft matching. */
export const wordVectorsOf = (vectors: WordVectors, text: string): Array<Float32Array> =>
  contentWords(text).flatMap((word) => vectors(word) ?? [])

export class SoftMatcher {
  /** Each document word's cosines with the query words, computed once per query (word vectors are shared objects). */
  private readonly cosines = new Map<Float32Array, Float32Array>()

  private readonly best: Float64Array

  private constructor(
    private readonly queryVectors: ReadonlyArray<Float32Array>,
    private readonly weights: ReadonlyArray<number>
  ) {
    this.best = new Float64Array(queryVectors.length)
  }

  /** A matcher for the query's content words that have vectors, or undefined when none has. */
  static forQuery(vectors: WordVectors, text: string, weightOf: (word: string) => number): SoftMatcher | undefined {
    const queryVectors: Array<Float32Array> = []
    const weights: Array<number> = []
    for (const word of contentWords(text)) {
      const vector = isValue(word) ? undefined : vectors(word)
      if (!vector) continue
      queryVectors.push(vector)
      weights.push(weightOf(word))
    }
    return queryVectors.length === 0 ? undefined : new SoftMatcher(queryVectors, weights)
  }

  private cosinesOf(vector: Float32Array): Float32Array {
    let row = this.cosines.get(vector)
    if (!row) {
      row = new Float32Array(this.queryVectors.length)
      for (let i = 0; i < row.length; i++) {
        const q = this.queryVectors[i]!
        let dot = 0
        for (let d = 0; d < vector.length; d++) dot += vector[d]! * q[d]!
        row[i] = dot
      }
      this.cosines.set(vector, row)
    }
    return row
  }

  /** Sum over query words of weight x how close the document's closest word comes (0 at `UNRELATED`, 1 when equal). */
  score(docVectors: ReadonlyArray<Float32Array>): number {
    const best = this.best.fill(UNRELATED)
    for (const vector of docVectors) {
      const row = this.cosinesOf(vector)
      for (let i = 0; i < row.length; i++) if (row[i]! > best[i]!) best[i] = row[i]!
    }
    return this.total(best)
  }

  /** By word number: 0 not yet met this query, -1 no vector, k > 0 the word's cosines at row k - 1 of `rows`. */
  private rowOf = new Int32Array(0)
  private rows = new Float32Array(0)
  private rowCount = 0

  /**
   * The same score, the document's words given by number (`ids[0..count)`,
   * repeats and 0 for none allowed) with `vectorOf` their unit vectors: each
   * number's cosines are computed once per query and kept in flat arrays, so
   * a pool of hundreds of memories costs a lookup per word.
   */
  scoreWords(ids: ArrayLike<number>, count: number, vectorOf: (id: number) => Float32Array | undefined): number {
    const queries = this.queryVectors.length
    const best = this.best.fill(UNRELATED)
    for (let k = 0; k < count; k++) {
      const id = ids[k]!
      if (id === 0) continue
      if (id >= this.rowOf.length) {
        const grown = new Int32Array(Math.max(id + 1, this.rowOf.length * 2, 1024))
        grown.set(this.rowOf)
        this.rowOf = grown
      }
      let row = this.rowOf[id]!
      if (row === 0) {
        const vector = vectorOf(id)
        if (vector === undefined) row = -1
        else {
          if ((this.rowCount + 1) * queries > this.rows.length) {
            const grown = new Float32Array(Math.max((this.rowCount + 1) * queries, this.rows.length * 2, 256 * queries))
            grown.set(this.rows)
            this.rows = grown
          }
          this.rows.set(this.cosinesOf(vector), this.rowCount * queries)
          row = ++this.rowCount
        }
        this.rowOf[id] = row
      }
      if (row < 0) continue
      const rows = this.rows
      for (let i = 0, at = (row - 1) * queries; i < queries; i++, at++) if (rows[at]! > best[i]!) best[i] = rows[at]!
    }
    return this.total(best)
  }

  private total(best: Float64Array) {
    let total = 0
    for (let i = 0; i < best.length; i++) total += (this.weights[i]! * (Math.min(best[i]!, 1) - UNRELATED)) / (1 - UNRELATED)
    return total
  }
}
