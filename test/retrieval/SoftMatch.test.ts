import { describe, expect, it } from "vitest"
import { loadGlove } from "../../services/embedder/Glove.ts"
import { HybridIndex, type IndexDoc } from "../../src/retrieval/HybridIndex.ts"
import { contentWords, SoftMatcher, type WordVectors, wordVectorsOf } from "../../src/retrieval/SoftMatch.ts"

const doc = (id: string, text: string, extra: Partial<IndexDoc> = {}): IndexDoc => ({
  id,
  text,
  entities: [],
  eventTime: null,
  groupKey: null,
  position: 0,
  ...extra
})

const unit = (...xs: Array<number>) => {
  const norm = Math.hypot(...xs)
  return Float32Array.from(xs.map((x) => x / norm))
}

/** A tiny vocabulary: an instrument is close to a violin, far from tennis or a speech. */
const table: Record<string, Float32Array> = {
  instrument: unit(1, 0, 0, 0),
  violin: unit(0.9, 0.3, 0, 0),
  tennis: unit(0, 0.2, 1, 0),
  speech: unit(0, 0, 1, 0),
  audrey: unit(0, 0, 0, 1),
  plays: unit(0, 1, 0, 0.3),
  play: unit(0, 1, 0, 0.3)
}
const vectors: WordVectors = (word) => table[word]

describe("soft term matching", () => {
  it("takes content words without stopwords or possessives", () => {
    expect(contentWords("What is Audrey's favourite instrument? The violin, of course")).toEqual(["audrey", "favourite", "instrument", "violin", "course"])
  })

  it("scores a document by how close its words come to each query word", () => {
    const matcher = SoftMatcher.forQuery(vectors, "Which instrument?", () => 1)!
    expect(matcher.score(wordVectorsOf(vectors, "a violin"))).toBeGreaterThan(0.8)
    expect(matcher.score(wordVectorsOf(vectors, "a speech about tennis"))).toBe(0)
    expect(matcher.score(wordVectorsOf(vectors, "an instrument and a speech"))).toBeCloseTo(1, 5)
    expect(SoftMatcher.forQuery(vectors, "unknown words only", () => 1)).toBeUndefined()
  })

  it("scores a document given by word numbers exactly as by its vectors, repeats and unknown words included", () => {
    const names = ["", ...Object.keys(table), "unknown"]
    const byNumber = (id: number) => vectors(names[id]!)
    const matcher = SoftMatcher.forQuery(vectors, "Which instrument does Audrey play?", (word) => word.length)!
    const documents = [["violin", "violin", "tennis"], ["unknown", "speech"], ["plays", "audrey", "instrument"], [], ["unknown"]]
    for (const document of documents) {
      const numbers = document.map((word) => names.indexOf(word))
      // A 0 is no word; a document's words met again in a later document reuse their cosines.
      const ids = Int32Array.from([0, ...numbers, 0])
      expect(matcher.scoreWords(ids, ids.length, byNumber)).toBe(matcher.score(document.flatMap((word) => vectors(word) ?? [])))
    }
    expect(matcher.scoreWords(Int32Array.from([names.indexOf("violin")]), 1, byNumber)).toBeGreaterThan(0)
  })

  it("never matches one month, number or ordinal for another", () => {
    const months: WordVectors = (word) => (word === "june" || word === "may" ? unit(1, 0.1, 0, 0) : undefined)
    expect(SoftMatcher.forQuery(months, "What did Audrey do in June 2022, the third time?", () => 1)).toBeUndefined()
  })

  it("finds the paraphrase among memories BM25 cannot tell apart", () => {
    const build = (words?: WordVectors) => {
      const index = new HybridIndex(words)
      index.upsert(doc("tennis", "Audrey plays tennis"))
      index.upsert(doc("speech", "Audrey plays her speech"))
      index.upsert(doc("violin", "Audrey plays the violin"))
      return index
    }
    const query = { text: "Which instrument does Audrey play?", mode: "accurate" as const, limit: 3 }
    const keywordOnly = build().search(query)
    expect(new Set(keywordOnly.map((h) => h.score)).size).toBe(1)
    expect(keywordOnly[0]!.id).not.toBe("violin")
    expect(build(vectors).search(query)[0]!.id).toBe("violin")
  })

  it("works with the GloVe word vectors the embedder loads", async () => {
    const glove = await loadGlove(process.env.ENGRAM_TEST_MODELS_DIR!)
    const violin = glove.wordVector("violin")!
    expect(Math.hypot(...violin)).toBeCloseTo(1, 5)
    expect(glove.wordVector("zzqxjvw")).toBeUndefined()
    const matcher = SoftMatcher.forQuery(glove.wordVector, "musical instrument", () => 1)!
    expect(matcher.score(wordVectorsOf(glove.wordVector, "violin"))).toBeGreaterThan(matcher.score(wordVectorsOf(glove.wordVector, "spreadsheet")))
  })
})
