/** Unit vectors in one growable Float32Array, scored by brute-force dot product. */

export class VectorIndex {
  private data: Float32Array
  private readonly present: Array<boolean> = []
  private dims = 0

  constructor(initialSlots = 1024) {
    this.data = new Float32Array(0)
    this.capacity = initialSlots
  }

  private capacity: number

  get dimensions() {
    return this.dims
  }

  set(slot: number, vector: Float32Array) {
    if (this.dims === 0) {
      this.dims = vector.length
      this.data = new Float32Array(this.capacity * this.dims)
    }
    if (vector.length !== this.dims) return // a vector from another embedder: keyword-only for this memory
    while ((slot + 1) * this.dims > this.data.length) {
      const grown = new Float32Array(this.data.length * 2)
      grown.set(this.data)
      this.data = grown
    }
    this.data.set(vector, slot * this.dims)
    this.present[slot] = true
  }

  has(slot: number) {
    return this.present[slot] === true
  }

  delete(slot: number) {
    this.present[slot] = false
  }

  similarity(slot: number, query: Float32Array) {
    if (!this.present[slot] || query.length !== this.dims) return 0
    let dot = 0
    const base = slot * this.dims
    for (let d = 0; d < this.dims; d++) dot += this.data[base + d]! * query[d]!
    return dot
  }

  /** The `k` most similar admitted slots, best first. */
  top(query: Float32Array, k: number, eligible: (slot: number) => boolean): Array<[slot: number, similarity: number]> {
    if (query.length !== this.dims || k <= 0) return []
    const best: Array<[number, number]> = []
    let floor = -Infinity
    for (let slot = 0; slot < this.present.length; slot++) {
      if (!this.present[slot]) continue
      const sim = this.similarity(slot, query)
      if (best.length >= k && sim <= floor) continue
      if (!eligible(slot)) continue
      best.push([slot, sim])
      if (best.length > k * 2) {
        best.sort((a, b) => b[1] - a[1])
        best.length = k
        floor = best[k - 1]![1]
      }
    }
    best.sort((a, b) => b[1] - a[1])
    return best.slice(0, k)
  }
}
