import { describe, expect, it } from "@effect/vitest"
import { makeWordIndex } from "../../services/embedder/WordIndex.ts"

describe("word index", () => {
  it("answers what a Map of the same words answers, last row for a repeated word", () => {
    const words = ["the", "of", "café", "naïve", "of", "x", "", "don't", "ab", "ba", ...Array.from({ length: 5000 }, (_, i) => `w${i * 7919}`)]
    const index = makeWordIndex(words.join("\n"))
    const map = new Map<string, number>()
    words.forEach((word, row) => map.set(word, row))
    expect(index.size).toBe(words.length)
    for (const word of new Set(words)) expect(index.get(word), word).toBe(map.get(word))
    for (const missing of ["th", "thee", "cafe", "w1", "A", "o", "f"]) expect(index.get(missing), missing).toBe(map.get(missing))
    expect(index.get("of")).toBe(4)
  })
})
