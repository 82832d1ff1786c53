import { describe, expect, it } from "@effect/vitest"
import { mentions, namesWholeWord, wholeWord } from "../../src/ingestion/Patterns.ts"

/** A deterministic generator, so a failure names the case that failed. */
const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x80000000
}

// Pieces chosen to sit on every side of a boundary: ASCII and accented letters, digits, a letter outside the
// basic plane (a surrogate pair), apostrophes, punctuation, spaces and line breaks.
const PIECES = ["Ann", "ann", "Anna", "Jo", "José", "é", "e", "1", "9", "𝒜", "𝒜nn", "'", "’", "-", ".", ",", " ", "\n", "x", "Ann Lee", "Lee", "日本", "ß"]

const phraseAndText = (next: () => number) => {
  const pick = () => PIECES[Math.floor(next() * PIECES.length)]!
  const phrase = [pick(), next() < 0.3 ? pick() : ""].join("").trim() || "Ann"
  const parts: Array<string> = []
  const length = 1 + Math.floor(next() * 12)
  for (let i = 0; i < length; i++) parts.push(next() < 0.3 ? phrase : pick())
  return { phrase, text: parts.join(next() < 0.5 ? "" : " ") }
}

describe("Patterns", () => {
  it("counts and finds whole words exactly as the lookbehind RegExp does, on 20,000 generated texts", () => {
    const next = random(7)
    let found = 0
    for (let i = 0; i < 20_000; i++) {
      const { phrase, text } = phraseAndText(next)
      const expected = text.match(wholeWord(phrase, "gu"))?.length ?? 0
      expect(mentions(text, phrase), JSON.stringify({ phrase, text })).toBe(expected)
      expect(namesWholeWord(text, phrase), JSON.stringify({ phrase, text })).toBe(wholeWord(phrase).test(text))
      if (expected > 0) found++
    }
    // Both answers occur often: the comparison is not of empty results.
    expect(found).toBeGreaterThan(5_000)
    expect(found).toBeLessThan(15_000)
  })

  it("reads the code points on either side of a phrase, not code units", () => {
    expect(mentions("𝒜Ann", "Ann")).toBe(0)
    expect(mentions("Ann𝒜", "Ann")).toBe(0)
    expect(mentions("José's friend José", "José")).toBe(2)
    expect(mentions("Joséa José", "José")).toBe(1)
    expect(mentions("AnnAnn Ann", "Ann")).toBe(1)
    // Matches never overlap, as a global RegExp's do not.
    expect(mentions("Ann Ann Ann", "Ann Ann")).toBe(1)
    expect(mentions("Ann Ann Ann Ann", "Ann Ann")).toBe(2)
    expect(namesWholeWord("Dr. Ann Lee-Smith", "Ann Lee")).toBe(true)
    expect(namesWholeWord("Ann Leeds", "Ann Lee")).toBe(false)
  })
})
