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

  private constructor(
    private readonly queryVectors: ReadonlyArray<Float32Array>,
    private readonly weights: ReadonlyArray<number>
  ) {}

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
    const best = new Float64Array(this.queryVectors.length).fill(UNRELATED)
    for (const vector of docVectors) {
      const row = this.cosinesOf(vector)
      for (let i = 0; i < row.length; i++) if (row[i]! > best[i]!) best[i] = row[i]!
    }
    let total = 0
    for (let i = 0; i < best.length; i++) total += (this.weights[i]! * (Math.min(best[i]!, 1) - UNRELATED)) / (1 - UNRELATED)
    return total
  }
}
