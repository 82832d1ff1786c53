import { describe, expect, it } from "vitest"
import { nlp, parseNames } from "../../src/ingestion/NameSentences.ts"

/** What the four matchers of entity extraction find in a parsed text. */
const found = (doc: ReturnType<ReturnType<typeof nlp>> | ReturnType<typeof parseNames>) => {
  if (doc === undefined) return { people: [], places: [], organizations: [], proper: [] }
  const out = (view: { out: (format: "array") => unknown }) => {
    const value = view.out("array")
    return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string").sort() : []
  }
  return { people: out(doc.people()), places: out(doc.places()), organizations: out(doc.organizations()), proper: out(doc.match("#ProperNoun+")) }
}

/** Sentences that reach each way compromise makes a name: capitals, lexicon words, switch words, endings, patterns, phrases, rules. */
const NAMING = [
  "Caroline went to the support group yesterday.",
  "we met mark at the cafe and talked for hours.",
  "i think april is the best month for hiking.",
  "the delivery van driver was late again.",
  "we bought salt & pepper at the corner shop.",
  "they moved to 12 main street last spring.",
  "my cousin lives in fridgeville now.",
  "he went to see o'neil about the contract.",
  "she studied in the u.s. for a year.",
  "the first teacher I had was strict.",
  "we visited the health board on tuesday.",
  "the king of spain gave a speech.",
  "he supports manchester united since he was a kid.",
  "we drove to mount hood for the weekend.",
  "I talked to the FBI about it.",
  "Sure, Jon and I can help with that.",
  "The Community center opened its doors today.",
  "toronto is cold in winter.",
  "we stayed with the andersson family."
]

/** Sentences in which compromise finds no name at all. */
const PLAIN = [
  "it was a long day and we talked about the weather.",
  "Well, that sounds like a great plan.",
  "and then we went home after dinner.",
  "I will bring some snacks and a blanket.",
  "The soup was warm and the bread was fresh."
]

describe("tagging only the sentences that can hold a name", () => {
  it("finds exactly the people, places, organisations and proper nouns a full parse finds", () => {
    for (const text of [...NAMING, ...PLAIN]) {
      expect({ text, ...found(parseNames(text)) }).toEqual({ text, ...found(nlp()(text)) })
    }
    // Long turns mixing the two: a name anywhere in the text is still found, with the plain sentences around it skipped.
    for (let i = 0; i < NAMING.length; i++) {
      const text = [PLAIN[i % PLAIN.length], NAMING[i], PLAIN[(i + 1) % PLAIN.length], NAMING[(i + 7) % NAMING.length]].join(" ")
      expect({ text, ...found(parseNames(text)) }).toEqual({ text, ...found(nlp()(text)) })
    }
  })

  it("every naming sentence is tagged, and a text of plain sentences is not parsed at all", () => {
    for (const text of NAMING) expect(parseNames(text), text).toBeDefined()
    for (const text of PLAIN) expect(parseNames(text), text).toBeUndefined()
    expect(parseNames(PLAIN.join(" "))).toBeUndefined()
  })

  it("a skipped sentence stays untagged while its neighbour is tagged", () => {
    const doc = parseNames("The soup was warm and the bread was fresh. Caroline went to Lisbon.")
    expect(doc).toBeDefined()
    expect(found(doc).people).toEqual(["Caroline"])
    // "soup" is a noun once tagged; in the skipped sentence it carries no tag.
    expect(doc!.match("soup").has("#Noun")).toBe(false)
    expect(doc!.match("Lisbon").has("#Place")).toBe(true)
  })
})
