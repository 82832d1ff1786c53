import { describe, expect, it } from "@effect/vitest"
import { applySourceDiff, LONE_SURROGATE, sourceDiff } from "../../services/store/SourceDiff.ts"

const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x80000000
}

const WORDS = ["I", "my", "Caroline", "Caroline's", "went", "to", "the", "support", "group", "yesterday", "(7 May 2023)", ",", ".",
  ":", "Melanie", "😀", "😃", "é", "\n", "  ", "5.2.3:", "0.0.0:"]

describe("source diffs", () => {
  it("give back exactly the source, over 20,000 generated pairs", () => {
    const next = random(5)
    let shorter = 0
    for (let n = 0; n < 20_000; n++) {
      const source = Array.from({ length: 1 + Math.floor(next() * 40) }, () => WORDS[Math.floor(next() * WORDS.length)]!).join(next() < 0.5 ? " " : "")
      // The text: the source with a few words replaced, dropped or added, as extraction rewrites it.
      const text = source.split(" ").flatMap((w) => {
        const r = next()
        return r < 0.1 ? [] : r < 0.2 ? [WORDS[Math.floor(next() * WORDS.length)]!] : r < 0.25 ? [w, "Caroline"] : [w]
      }).join(" ")
      const diff = sourceDiff(text, source)
      if (diff === null) continue
      shorter++
      expect(LONE_SURROGATE.test(diff)).toBe(false)
      expect(diff.length).toBeLessThan(source.length / 2)
      expect(applySourceDiff(text, diff), JSON.stringify({ text, source, diff })).toBe(source)
    }
    // Most pairs are stored as their edits: the comparison above is not of nothing.
    expect(shorter).toBeGreaterThan(5_000)
  })

  it("store a first-person source as the few edits from its text", () => {
    const text = "Caroline: Caroline went to the LGBTQ support group yesterday (7 May 2023) and it was so powerful."
    const source = "Caroline: I went to the LGBTQ support group yesterday and it was so powerful."
    const diff = sourceDiff(text, source)!
    expect(diff.length).toBeLessThan(30)
    expect(applySourceDiff(text, diff)).toBe(source)
    expect(sourceDiff(text, text)).toBeNull()
    // Nothing in common: stored whole.
    expect(sourceDiff("abcdefghij", "0123456789")).toBeNull()
  })
})
