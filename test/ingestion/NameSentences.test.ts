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

  it("a plain sentence that names no one is left out of the document; one that may stays in it, untagged if it cannot", () => {
    const doc = parseNames("The soup was warm and the bread was fresh. Caroline went to Lisbon. We can't go, we're tired.")
    expect(doc).toBeDefined()
    expect(found(doc).people).toEqual(["Caroline"])
    // The first sentence is plain words, none a name: compromise never tokenized it.
    expect(doc!.document).toHaveLength(2)
    expect(doc!.match("soup").found).toBe(false)
    expect(doc!.match("Lisbon").has("#Place")).toBe(true)
    // The last has contractions, so compromise tokenized it; it holds no name, so it was not tagged.
    expect(doc!.match("tired").found).toBe(true)
    expect(doc!.match("tired").has("#Adjective")).toBe(false)
  })

  it("finds what a full parse finds, in the same order, over texts of every kind of word and sentence", () => {
    // Plain sentences (skipped untokenized when no word can name), contractions, capitals mid-sentence, numbers,
    // first words that are names or common words, lexicon words compromise may read as names ("mark", "april").
    const WORDS = ["the", "a", "and", "we", "went", "to", "mark", "april", "paris", "grace", "way", "sure", "well", "first",
      "teacher", "van", "driver", "main", "street", "twelve", "gonna", "plz", "i", "board", "health", "united", "fridgeville",
      "andersson", "weather", "soup", "lovely", "quickly", "after", "dinner", "Jon", "Maya", "Lisbon", "FBI", "can't", "o'neil", "12"]
    let seed = 11
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n
    const ordered = (doc: ReturnType<typeof parseNames> | ReturnType<ReturnType<typeof nlp>>) =>
      doc === undefined ? [[], [], [], []] : [doc.people(), doc.places(), doc.organizations(), doc.match("#ProperNoun+")].map((view) => view.out("array"))
    for (let i = 0; i < 1500; i++) {
      const sentences = Array.from({ length: 1 + next(4) }, () => {
        const words = Array.from({ length: 3 + next(8) }, () => WORDS[next(WORDS.length)]!)
        if (next(2) === 0) words[0] = words[0]![0]!.toUpperCase() + words[0]!.slice(1)
        return words.join(next(4) === 0 ? ", " : " ") + [".", "!", "?", "..."][next(4)]
      })
      const text = sentences.join(" ")
      expect({ text, found: ordered(parseNames(text)) }).toEqual({ text, found: ordered(nlp()(text)) })
    }
  })
})
