/**
 * The vector scan: the SIMD kernel's products are the plain loop's (up to
 * float32 rounding), and the index's candidates and similarities are exactly
 * those of an exact scan, through deletions and renumbering.
 */
import { describe, expect, it } from "@effect/vitest"
import { VectorIndex } from "../../src/retrieval/VectorIndex.ts"
import { simd, VectorStore } from "../../src/retrieval/VectorKernel.ts"

const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff - 0.5
}

const unit = (next: () => number, dims: number) => {
  const v = Float32Array.from({ length: dims }, next)
  const norm = Math.hypot(...v)
  return v.map((x) => x / norm)
}

/** Every admitted slot's exact similarity, best first, the lower slot first on ties. */
const exactTop = (vectors: ReadonlyMap<number, Float32Array>, query: Float32Array, k: number, admit: (slot: number) => boolean) =>
  [...vectors].filter(([slot]) => admit(slot))
    .map(([slot, v]) => {
      let dot = 0
      for (let d = 0; d < v.length; d++) dot += v[d]! * query[d]!
      return [slot, dot] as const
    })
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k)

describe("the vector scan", () => {
  it("runs on WebAssembly SIMD here, with the plain loop's products", () => {
    expect(simd).toBe(true)
    const next = random(3)
    for (const dims of [4, 7, 100, 130]) {
      const fast = new VectorStore(dims)
      const plain = new VectorStore(dims, false)
      fast.ensure(300)
      plain.ensure(300)
      for (let slot = 0; slot < 300; slot++) {
        const v = unit(next, dims)
        fast.data.set(v, slot * fast.stride)
        plain.data.set(v, slot * plain.stride)
      }
      const query = unit(next, dims)
      const a = fast.dots(query, 300).slice()
      const b = plain.dots(query, 300)
      for (let slot = 0; slot < 300; slot++) expect(Math.abs(a[slot]! - b[slot]!)).toBeLessThan(1e-5)
    }
  })

  it("answers the exact top k and exact similarities, through deletions and renumbering", () => {
    const next = random(11)
    const dims = 100
    const index = new VectorIndex()
    const kept = new Map<number, Float32Array>()
    for (let slot = 0; slot < 6000; slot++) {
      const v = unit(next, dims)
      index.set(slot, v)
      kept.set(slot, v)
    }
    // Near-duplicates, so that ties and near-ties are among the candidates.
    for (let slot = 6000; slot < 6100; slot++) {
      const v = kept.get(slot - 6000)!
      index.set(slot, v)
      kept.set(slot, v)
    }
    const check = (admit: (slot: number) => boolean) => {
      for (let q = 0; q < 5; q++) {
        const query = unit(next, dims)
        const scan = index.scan(query, 200, admit)
        const expected = exactTop(kept, query, 200, admit)
        expect(scan.top.map(([slot, value]) => [slot, value])).toEqual(expected.map(([slot, value]) => [slot, value]))
        for (const [slot, value] of expected) expect(scan.similarity(slot)).toBe(value)
      }
    }
    check(() => true)
    check((slot) => slot % 3 !== 0)
    for (let slot = 0; slot < 6100; slot += 2) {
      index.delete(slot)
      kept.delete(slot)
    }
    check(() => true)
    // Close the holes: every kept slot moves down to its rank.
    const renumber = new Int32Array(6100).fill(-1)
    const moved = new Map<number, Float32Array>()
    let count = 0
    for (let slot = 0; slot < 6100; slot++) {
      const v = kept.get(slot)
      if (v === undefined) continue
      renumber[slot] = count
      moved.set(count++, v)
    }
    index.renumber(renumber, count)
    kept.clear()
    for (const [slot, v] of moved) kept.set(slot, v)
    check(() => true)
    expect(index.vectorAt(0)).toEqual(moved.get(0))
  })
})
