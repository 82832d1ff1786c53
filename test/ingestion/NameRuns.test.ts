import { describe, expect, it } from "vitest"
import { nameRuns } from "../../src/ingestion/NameRuns.ts"
import { nlp, parseNames } from "../../src/ingestion/NameSentences.ts"

type Doc = ReturnType<ReturnType<typeof nlp>>

/** What compromise's own four matchers answer, in the shape `nameRuns` answers. */
const byCompromise = (doc: Doc) => {
  const out = (view: { out: (format: "array") => unknown }) => view.out("array")
  return { people: out(doc.people()), places: out(doc.places()), organizations: out(doc.organizations()), proper: out(doc.match("#ProperNoun+")) }
}

/** Words that reach every rule the runs follow or leave to compromise: commas in and after names, possessives, honorifics, places that are lists. */
const WORDS = ["the", "a", "and", "we", "went", "to", "met", "said", "in", "at", "with", "his", "her", "mark", "april", "grace", "paris", "Paris,",
  "France", "france,", "Europe,", "Asia,", "China", "Lisbon", "Lisbon,", "Portugal", "Toronto,", "Canada", "Texas,", "Austin", "Oslo", "Dr.", "Mr",
  "Mrs.", "Sir", "king", "queen", "Jon", "Jon,", "Jon's", "Maya", "Maya,", "Maya's", "friend's", "Elton", "John", "Vincent", "van", "Gogh", "IBM",
  "Google", "Apple", "Inc.", "United", "Nations", "Microsoft,", "Harvard", "University", "FBI", "12", "main", "street", "can't", "o'neil",
  "Europe, China", "Oslo, Lisbon", "Austin, Texas", "Texas, Austin", "Paris, France", "Jon's Maya", "Maya's Jon Smith", "Elton John's"]

const texts = (count: number, seed: number) => {
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + next(4) }, () => {
      const words = Array.from({ length: 3 + next(10) }, () => WORDS[next(WORDS.length)]!)
      return words.join(next(5) === 0 ? ", " : " ") + [".", "!", "?", "..."][next(4)]
    }).join(" "))
}

describe("the name matchers read off the tagged terms", () => {
  it("answer what compromise's matchers answer, in the same order, or leave the text to them", () => {
    let read = 0
    let left = 0
    for (const text of texts(3000, 5)) {
      // A fully tagged text, and the document entity extraction tags (only the sentences that can name someone).
      for (const doc of [nlp()(text), parseNames(text)]) {
        if (doc === undefined) continue
        const runs = nameRuns(doc.document)
        if (runs === undefined) {
          left++
          continue
        }
        read++
        expect({ text, ...runs }).toEqual({ text, ...byCompromise(doc) })
      }
    }
    // Both paths were taken often: the comparison above covered the runs, and the rules they leave were met.
    expect(read).toBeGreaterThan(500)
    expect(left).toBeGreaterThan(500)
  })

  it("end a person after a comma or a possessive, keep a place list and an organisation across a comma", () => {
    const doc = nlp()("Jon, Maya and Ben met at Google, Microsoft and IBM. Jon's sister Ana visited Lisbon.")
    const runs = nameRuns(doc.document)
    expect(runs).toEqual(byCompromise(doc))
    // "Jon," and "Jon's" are runs of their own (compromise reads "Maya" here as no one, and "sister" as part of a name).
    expect(runs?.people).toEqual(["Jon,", "Ben", "Jon's", "sister Ana"])
    // Organisations and proper nouns run on across a comma.
    expect(runs?.organizations).toEqual(["Google, Microsoft", "IBM."])
    expect(runs?.proper).toEqual(["Jon, Maya", "Ben", "Google, Microsoft", "IBM.", "Jon's sister Ana", "Lisbon."])
  })

  it("leave to compromise an honorific and a comma inside a place", () => {
    expect(nameRuns(nlp()("Dr. Lee met Jon yesterday.").document)).toBeUndefined()
    expect(nameRuns(nlp()("We flew to Paris, France last May.").document)).toBeUndefined()
    expect(nameRuns(nlp()("We flew to Paris last May.").document)).toEqual(byCompromise(nlp()("We flew to Paris last May.")))
  })
})
