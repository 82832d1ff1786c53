/**
 * Unit vectors by slot, scanned whole for each query: the kernel's products
 * of int8 codes (SIMD, VectorKernel.ts; float32 products without it) choose
 * the candidates, and every similarity answered is computed again exactly (in
 * float64, dimension by dimension), so the candidates' order and values are
 * those of an exact scan.
 */
import { TopK } from "./TopK.ts"
import { VectorStore } from "./VectorKernel.ts"

/** One query's similarities; valid until the next `scan`. */
export interface VectorScan {
  /** The `k` most similar admitted slots, best first (on equal similarity the lower slot first). */
  readonly top: ReadonlyArray<readonly [slot: number, similarity: number]>
  /** The similarity of `slot` to the query, 0 when it has no vector. */
  readonly similarity: (slot: number) => number
}

/**
 * Candidates taken by the first pass beyond the `k` wanted, and then ranked
 * exactly. The first pass multiplies int8 codes (each vector scaled to its
 * largest component): on unit vectors of 100 dimensions they move a product
 * by about 0.002 at most, and float32 sums (without SIMD) by about 1e-6. A
 * test on the word vectors of real sentences needs no margin at all to fail.
 */
const margin = (k: number) => Math.ceil(k / 2) + 32

export class VectorIndex {
  private store: VectorStore | undefined
  private present = new Uint8Array(0)
  /** One past the highest slot ever given a vector. */
  private extent = 0
  private dims = 0
  private reserved = 0

  get dimensions() {
    return this.dims
  }

  /** Room for `slots` vectors at once (an index read back whole), instead of growing step by step. */
  reserve(slots: number) {
    this.reserved = Math.max(this.reserved, slots)
    this.store?.ensure(slots)
  }

  set(slot: number, vector: Float32Array) {
    if (this.store === undefined) {
      this.dims = vector.length
      this.store = new VectorStore(vector.length)
      this.store.ensure(Math.max(this.reserved, slot + 1))
    }
    if (vector.length !== this.dims) return // a vector from another embedder: keyword-only for this memory
    this.store.ensure(slot + 1)
    this.store.put(slot, vector)
    if (slot >= this.present.length) {
      const grown = new Uint8Array(Math.max(slot + 1, this.present.length * 2, 64))
      grown.set(this.present)
      this.present = grown
    }
    this.present[slot] = 1
    this.extent = Math.max(this.extent, slot + 1)
  }

  /**
   * `count` vectors of `dims` numbers at once, from slot `from` (a wake's
   * chunk), with their int8 codes and scales when made already.
   */
  setMany(from: number, count: number, dims: number, vectors: Float32Array, codes?: Int8Array, scales?: Float32Array) {
    if (count === 0) return
    if (this.store === undefined) {
      this.dims = dims
      this.store = new VectorStore(dims)
      this.store.ensure(Math.max(this.reserved, from + count))
    }
    if (dims !== this.dims) return
    this.store.ensure(from + count)
    this.store.putMany(from, count, vectors, codes, scales)
    if (from + count > this.present.length) {
      const grown = new Uint8Array(Math.max(from + count, this.present.length * 2, 64))
      grown.set(this.present)
      this.present = grown
    }
    this.present.fill(1, from, from + count)
    this.extent = Math.max(this.extent, from + count)
  }

  has(slot: number) {
    return this.present[slot] === 1
  }

  delete(slot: number) {
    if (slot < this.present.length) this.present[slot] = 0
  }

  /** The stored vector of `slot` (a copy), or undefined. */
  vectorAt(slot: number): Float32Array | undefined {
    if (this.present[slot] !== 1 || this.store === undefined) return undefined
    const at = slot * this.store.stride
    return this.store.data.slice(at, at + this.dims)
  }

  /** Moves every kept slot to its new number (`renumber[old]`, -1 to drop it), as the owner closes its holes. */
  renumber(renumber: Int32Array, slots: number) {
    const store = this.store
    if (store === undefined) return
    const present = new Uint8Array(Math.max(slots, 64))
    // Slots only move down (holes close), so copying in increasing order never overwrites one not yet moved.
    for (let old = 0; old < Math.min(renumber.length, this.extent); old++) {
      const now = renumber[old]!
      if (now < 0 || this.present[old] !== 1) continue
      if (now !== old) store.move(old, now)
      present[now] = 1
    }
    this.present = present
    this.extent = slots
  }

  /** The exact similarity of `slot` to `query`: float64 sums, dimension by dimension, as the scan ranks them. */
  similarity(slot: number, query: Float32Array) {
    if (this.present[slot] !== 1 || query.length !== this.dims || this.store === undefined) return 0
    const data = this.store.data
    let dot = 0
    for (let d = 0, i = slot * this.store.stride; d < this.dims; d++, i++) dot += data[i]! * query[d]!
    return dot
  }

  /**
   * The `k` best admitted slots by similarity to `query` (every slot is
   * admitted when `admit` is undefined), with exact similarities.
   */
  scan(query: Float32Array, k: number, admit?: (slot: number) => boolean): VectorScan {
    return this.scanApart(query, [{ k, admit }])[0]!
  }

  /**
   * The `k` best slots of each of several admitted sets, from one pass over
   * the vectors (a recall that ranks notes apart from facts reads them once).
   */
  scanApart(query: Float32Array, sets: ReadonlyArray<{ readonly k: number; readonly admit?: ((slot: number) => boolean) | undefined }>): Array<VectorScan> {
    const store = this.store
    if (query.length !== this.dims || this.dims === 0 || store === undefined) return sets.map(() => ({ top: [], similarity: () => 0 }))
    const { extent, present } = this
    const approximate = store.approximate(query, extent)
    const exact = new Map<number, number>()
    const similarity = (slot: number) => {
      let value = exact.get(slot)
      if (value === undefined) exact.set(slot, (value = this.similarity(slot, query)))
      return value
    }
    return sets.map(({ admit, k }) => {
      const wanted = Math.max(k, 0)
      const candidates = new TopK(wanted + margin(wanted))
      for (let slot = 0; slot < extent; slot++) {
        if (present[slot] !== 1) continue
        const value = approximate[slot]!
        if (candidates.wouldKeep(value) && (admit === undefined || admit(slot))) candidates.offer(slot, value)
      }
      const best = new TopK(wanted)
      // In slot order, so that equal similarities keep the lower slot first.
      for (const [slot] of [...candidates.entries()].sort((a, b) => a[0] - b[0])) best.offer(slot, similarity(slot))
      return { top: best.entries(), similarity }
    })
  }
}
