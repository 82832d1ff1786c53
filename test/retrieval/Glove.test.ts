/**
 * The word vectors are read a row at a time, as words are first met, instead
 * of the whole 80 MB matrix at once: every row read must be the file's own,
 * at the right offset, for words from the first row to the last.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { compactedFile, loadGlove } from "../../services/embedder/Glove.ts"
import { normalize } from "../../services/embedder/Embedder.ts"
import { HybridIndex } from "../../src/retrieval/HybridIndex.ts"

describe("the word vectors, read on demand", () => {
  it("give each word the unit vector of its own row in the file, and a one-word text that vector", async () => {
    const dir = process.env.ENGRAM_TEST_MODELS_DIR!
    const glove = await loadGlove(dir)
    // The file read whole, independently of the reader under test.
    const bytes = readFileSync(compactedFile(dir))
    const dims = bytes.readUInt32LE(4)
    const count = bytes.readUInt32LE(8)
    const vocabularyLength = bytes.readUInt32LE(12)
    const words = bytes.subarray(16, 16 + vocabularyLength).toString("utf8").split("\n")
    expect(words).toHaveLength(count)
    const offset = 16 + vocabularyLength + ((4 - (vocabularyLength % 4)) % 4)
    const rowOf = (row: number) => {
      const vector = new Float32Array(dims)
      for (let d = 0; d < dims; d++) vector[d] = bytes.readFloatLE(offset + (row * dims + d) * 4)
      return vector
    }
    // The first rows, the last, and a spread between (the words of the vocabulary that are single lower-case words).
    const sample = [0, 1, 2, 3, 17, 999, 12_345, 98_765, count - 2, count - 1, ...Array.from({ length: 40 }, (_, i) => Math.floor((i * count) / 40))]
    let checked = 0
    for (const row of sample) {
      const word = words[row]!
      if (!/^[a-z0-9]+$/.test(word) || words.indexOf(word) !== row) continue
      const expected = normalize(rowOf(row))
      expect(Array.from(glove.wordVector(word)!)).toEqual(Array.from(expected))
      // A one-word text is its word's vector scaled by its weight, then made unit again: equal up to rounding.
      const embedded = glove.embed(word)
      expect(Math.max(...expected.map((v, d) => Math.abs(v - embedded[d]!)))).toBeLessThan(1e-6)
      checked++
    }
    expect(checked).toBeGreaterThan(30)
    // Asked again, the same vector (kept, not read again).
    expect(glove.wordVector(words[17]!)).toBe(glove.wordVector(words[17]!))
    expect(glove.wordVector("zzqxjvw")).toBeUndefined()
  })
})

describe("vectors made from word parts", () => {
  it("are, bit for bit, the vectors the embedder gives each text", async () => {
    const glove = await loadGlove(process.env.ENGRAM_TEST_MODELS_DIR!)
    const index = new HybridIndex(glove.wordVector, { wordPart: glove.wordPart, dimensions: glove.dimensions })
    const texts = [
      "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
      "Melanie: Thanks, Caroline! That's awesome, I'm proud of you. Don't stop.",
      "zzqxjvw qqqq", // no word with a vector: zeros, as the embedder answers
      "", "...!?", "Numbers 2023 and 7 May, the 3rd time; rock'n'roll isn't dead",
      ...Array.from({ length: 50 }, (_, i) => `Note ${i}: the ${["violin", "garden", "turtle", "marathon"][i % 4]} lesson went well on day ${i * 7}.`)
    ]
    texts.forEach((text, i) => index.upsert({ id: `t${i}`, text, entities: [], eventTime: null, groupKey: null, position: i }))
    texts.forEach((text, i) => {
      const made = index.placedAt(index.slot(`t${i}`)!)!.vector!
      expect(Array.from(made), text).toEqual(Array.from(glove.embed(text)))
    })
  })
})
