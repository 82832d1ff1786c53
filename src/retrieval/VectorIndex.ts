/** Unit vectors in one growable Float32Array, scored by brute-force dot product. */
import { TopK } from "./TopK.ts"

/** One query's similarities; valid until the next `scan`. */
export interface VectorScan {
  /** The `k` most similar admitted slots, best first (on equal similarity the lower slot first). */
  readonly top: ReadonlyArray<readonly [slot: number, similarity: number]>
  /** The similarity of `slot` to the query, 0 when it has no vector. */
  readonly similarity: (slot: number) => number
}

export class VectorIndex {
  private data: Float32Array
  private present = new Uint8Array(0)
  /** One past the highest slot ever given a vector. */
  private extent = 0
  private dims = 0
  /** The last scan's similarities, by slot. */
  private sims = new Float64Array(0)

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
    if (slot >= this.present.length) {
      const grown = new Uint8Array(Math.max(slot + 1, this.present.length * 2, 64))
      grown.set(this.present)
      this.present = grown
    }
    this.present[slot] = 1
    this.extent = Math.max(this.extent, slot + 1)
  }

  has(slot: number) {
    return this.present[slot] === 1
  }

  delete(slot: number) {
    if (slot < this.present.length) this.present[slot] = 0
  }

  /** The stored vector of `slot` (a view, valid until the next change), or undefined. */
  vectorAt(slot: number): Float32Array | undefined {
    return this.present[slot] === 1 ? this.data.subarray(slot * this.dims, (slot + 1) * this.dims) : undefined
  }

  /** Moves every kept slot to its new number (`renumber[old]`, -1 to drop it), as the owner closes its holes. */
  renumber(renumber: Int32Array, slots: number) {
    if (this.dims === 0) return
    const data = new Float32Array(Math.max(slots, 64) * this.dims)
    const present = new Uint8Array(Math.max(slots, 64))
    for (let old = 0; old < Math.min(renumber.length, this.extent); old++) {
      const now = renumber[old]!
      if (now < 0 || this.present[old] !== 1) continue
      data.set(this.data.subarray(old * this.dims, (old + 1) * this.dims), now * this.dims)
      present[now] = 1
    }
    this.data = data
    this.present = present
    this.extent = slots
    this.sims = new Float64Array(0)
  }

  similarity(slot: number, query: Float32Array) {
    if (this.present[slot] !== 1 || query.length !== this.dims) return 0
    let dot = 0
    const base = slot * this.dims
    for (let d = 0; d < this.dims; d++) dot += this.data[base + d]! * query[d]!
    return dot
  }

  /**
   * Scores every slot against `query` in one pass over the matrix and keeps
   * the `k` best admitted ones (every slot is admitted when `admit` is undefined).
   */
  scan(query: Float32Array, k: number, admit?: (slot: number) => boolean): VectorScan {
    const none: VectorScan = { top: [], similarity: () => 0 }
    if (query.length !== this.dims || this.dims === 0) return none
    if (this.sims.length < this.extent) this.sims = new Float64Array(Math.max(this.extent, this.sims.length * 2))
    const { data, dims, extent, present, sims } = this
    const q = Float64Array.from(query)
    const best = new TopK(Math.max(k, 0))
    const keep = (slot: number, dot: number) => {
      sims[slot] = dot
      if (best.wouldKeep(dot) && (admit === undefined || admit(slot))) best.offer(slot, dot)
    }
    // Four slots per pass, each summed over the dimensions in order (as `similarity` does):
    // four independent sums keep the processor busy, and every slot's value is the same.
    let slot = 0
    for (; slot + 4 <= extent; slot += 4) {
      const base = slot * dims
      let dot0 = 0
      let dot1 = 0
      let dot2 = 0
      let dot3 = 0
      for (let d = 0, i = base; d < dims; d++, i++) {
        const value = q[d]!
        dot0 += data[i]! * value
        dot1 += data[i + dims]! * value
        dot2 += data[i + 2 * dims]! * value
        dot3 += data[i + 3 * dims]! * value
      }
      if (present[slot] === 1) keep(slot, dot0)
      if (present[slot + 1] === 1) keep(slot + 1, dot1)
      if (present[slot + 2] === 1) keep(slot + 2, dot2)
      if (present[slot + 3] === 1) keep(slot + 3, dot3)
    }
    for (; slot < extent; slot++) {
      if (present[slot] !== 1) continue
      let dot = 0
      for (let d = 0, i = slot * dims; d < dims; d++, i++) dot += data[i]! * q[d]!
      keep(slot, dot)
    }
    return {
      top: best.entries(),
      similarity: (slot) => (slot < extent && present[slot] === 1 ? sims[slot]! : 0)
    }
  }
}
