/**
 * The vector scan: the SIMD kernel's products are the plain loop's (up to
 * float32 rounding), and the index's candidates and similarities are exactly
 * those of an exact scan, through deletions and renumbering.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { loadGlove } from "../../services/embedder/Glove.ts"
import { VectorIndex } from "../../src/retrieval/VectorIndex.ts"
import { PartSums, simd, VectorStore } from "../../src/retrieval/VectorKernel.ts"

/** What a JavaScript-only PartSums holds for `id` (its plain parts), to compute the expected sums independently. */
const plainPart = (sums: PartSums, id: number) => {
  const parts: unknown = Reflect.get(sums, "plainParts")
  const part = Array.isArray(parts) ? parts[id] : undefined
  if (typeof part !== "object" || part === null || !("weight" in part) || !("vector" in part)) throw new Error(`no part ${id}`)
  return { weight: Number(part.weight), vector: part.vector instanceof Float32Array ? part.vector : new Float32Array(0) }
}

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

  it("chooses candidates by int8 codes whose products follow the float ones", () => {
    const next = random(5)
    for (const dims of [4, 7, 100, 130]) {
      const store = new VectorStore(dims)
      store.ensure(300)
      const vectors = Array.from({ length: 300 }, () => unit(next, dims))
      vectors.forEach((v, slot) => store.put(slot, v))
      const query = unit(next, dims)
      const ranks = store.approximate(query, 300).slice()
      const exact = vectors.map((v) => v.reduce((sum, x, d) => sum + x * query[d]!, 0))
      // One positive factor for all (the query's code scale): found from the largest, then every value within int8 rounding.
      const top = exact.indexOf(Math.max(...exact))
      const factor = exact[top]! / ranks[top]!
      expect(factor).toBeGreaterThan(0)
      for (let slot = 0; slot < 300; slot++) expect(Math.abs(ranks[slot]! * factor - exact[slot]!)).toBeLessThan(0.02)
    }
  })

  it("answers the exact top k while it grows between scans (the room a growth adds held the last scan's scores)", () => {
    const next = random(23)
    for (const dims of [7, 100, 130]) {
      const index = new VectorIndex()
      const kept = new Map<number, Float32Array>()
      for (let slot = 0; slot < 3000; slot++) {
        const v = unit(next, dims)
        index.set(slot, v)
        kept.set(slot, v)
        if (slot % 97 === 0) {
          const query = unit(next, dims)
          expect(index.scan(query, 20).top).toEqual(exactTop(kept, query, 20, () => true))
        }
      }
    }
  })

  it("on the word vectors of real sentences, answers the exact top 10 of every query", async () => {
    // Real English: the project's own documentation, a sentence a vector, made as the local embedder makes them.
    const glove = await loadGlove(process.env.ENGRAM_TEST_MODELS_DIR!)
    const root = join(import.meta.dirname, "..", "..")
    const texts = [join(root, "README.md"), ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => join(root, "docs", f))]
      .flatMap((file) => readFileSync(file, "utf8").split(/(?<=[.!?])\s+|\n+/))
      .map((sentence) => sentence.replace(/[`*#|>_-]+/g, " ").trim())
      .filter((sentence) => sentence.split(/\s+/).length >= 4)
    expect(texts.length).toBeGreaterThan(3000)
    const index = new VectorIndex()
    const kept = new Map<number, Float32Array>()
    const queries: Array<Float32Array> = []
    texts.forEach((text, i) => {
      const v = glove.embed(text)
      if (i % 10 === 0) queries.push(v)
      else {
        index.set(kept.size, v)
        kept.set(kept.size, v)
      }
    })
    let checked = 0
    for (const query of queries) {
      for (const k of [10, 60]) {
        const scan = index.scan(query, k)
        expect(scan.top).toEqual(exactTop(kept, query, k, () => true))
        checked++
      }
    }
    expect(checked).toBeGreaterThan(600)
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

describe("sums of word parts", () => {
  it("are on SIMD, bit for bit the plain Float32Array sums", () => {
    const next = random(17)
    for (const dims of [100, 7, 300]) {
      const fast = new PartSums(dims)
      const plain = new PartSums(dims, false)
      const words = 500
      for (let id = 1; id <= words; id++) {
        const weight = Math.abs(next()) * 2 + (id % 7 === 0 ? 1e-4 : 0)
        const vector = Float32Array.from({ length: dims }, () => next() * (id % 5 === 0 ? 1e-3 : 3))
        fast.set(id, weight, vector)
        plain.set(id, weight, vector)
      }
      for (let text = 0; text < 200; text++) {
        // Long texts too: beyond the room first set aside for a text's word numbers.
        const count = text === 0 ? 5000 : 1 + Math.floor(Math.abs(next()) * 120)
        const ids = Int32Array.from({ length: count }, () => 1 + Math.floor(Math.abs(next()) * words))
        const expected = new Float32Array(dims)
        // What HybridIndex did in JavaScript: a Float32Array summed in order.
        for (const id of ids) {
          const part = plainPart(plain, id)
          for (let d = 0; d < dims; d++) expected[d] = expected[d]! + part.weight * part.vector[d]!
        }
        expect(Array.from(fast.sum(ids, count))).toEqual(Array.from(expected))
        expect(Array.from(plain.sum(ids, count))).toEqual(Array.from(expected))
      }
    }
  })
})
