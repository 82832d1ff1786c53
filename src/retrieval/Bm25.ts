/** Incremental BM25 over integer document slots: postings per term, lengths per slot. */

export class Bm25 {
  private readonly postings = new Map<string, Map<number, number>>()
  private readonly lengths = new Map<number, number>()
  private readonly termsOf = new Map<number, ReadonlyArray<string>>()
  private totalLength = 0

  constructor(readonly k1 = 1.2, readonly b = 0.75) {}

  get size() {
    return this.lengths.size
  }

  add(slot: number, docTerms: ReadonlyArray<string>) {
    this.remove(slot)
    const counts = new Map<string, number>()
    for (const term of docTerms) counts.set(term, (counts.get(term) ?? 0) + 1)
    for (const [term, count] of counts) {
      let posting = this.postings.get(term)
      if (!posting) this.postings.set(term, (posting = new Map()))
      posting.set(slot, count)
    }
    this.lengths.set(slot, docTerms.length)
    this.termsOf.set(slot, [...counts.keys()])
    this.totalLength += docTerms.length
  }

  remove(slot: number) {
    const previous = this.termsOf.get(slot)
    if (!previous) return
    for (const term of previous) {
      const posting = this.postings.get(term)
      posting?.delete(slot)
      if (posting?.size === 0) this.postings.delete(term)
    }
    this.totalLength -= this.lengths.get(slot) ?? 0
    this.lengths.delete(slot)
    this.termsOf.delete(slot)
  }

  /** Inverse document frequency of a term; a term no document holds gets the rarest value. */
  idf(term: string) {
    const n = this.lengths.size
    const df = this.postings.get(term)?.size ?? 0
    return Math.log(1 + (n - df + 0.5) / (df + 0.5))
  }

  /** Scores of every slot matching at least one query term and admitted by `eligible`. */
  score(queryTerms: ReadonlyArray<string>, eligible: (slot: number) => boolean): Map<number, number> {
    const scores = new Map<number, number>()
    const n = this.lengths.size
    if (n === 0) return scores
    const avg = this.totalLength / n || 1
    const admitted = new Map<number, boolean>()
    for (const term of new Set(queryTerms)) {
      const posting = this.postings.get(term)
      if (!posting) continue
      const idf = this.idf(term)
      for (const [slot, tf] of posting) {
        let ok = admitted.get(slot)
        if (ok === undefined) admitted.set(slot, (ok = eligible(slot)))
        if (!ok) continue
        const length = this.lengths.get(slot)!
        const part = (idf * tf * (this.k1 + 1)) / (tf + this.k1 * (1 - this.b + (this.b * length) / avg))
        scores.set(slot, (scores.get(slot) ?? 0) + part)
      }
    }
    return scores
  }
}
