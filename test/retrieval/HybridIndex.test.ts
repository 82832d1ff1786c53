import { describe, expect, it } from "vitest"
import { HybridIndex, type IndexDoc, WEIGHTS } from "../../src/retrieval/HybridIndex.ts"
import { stem, terms } from "../../src/retrieval/Text.ts"

const doc = (id: string, text: string, extra: Partial<IndexDoc> = {}): IndexDoc => ({
  id,
  text,
  entities: [],
  eventTime: null,
  groupKey: null,
  position: 0,
  ...extra
})

describe("keyword analysis", () => {
  it("drops stopwords and stems plurals and verb forms", () => {
    expect(terms("The cats were running to the parties")).toEqual(["cat", "run", "party"])
    expect(stem("hoping")).toBe("hope")
    expect(stem("studies")).toBe("study")
  })
})

describe("HybridIndex", () => {
  it("ranks keyword matches by BM25, with scores in 0..1 descending", () => {
    const index = new HybridIndex()
    index.upsert(doc("a", "Audrey plays the violin"))
    index.upsert(doc("b", "Audrey plays tennis with the violin teacher's son"))
    index.upsert(doc("c", "Tim reads novels"))
    const hits = index.search({ text: "violin", mode: "fast", limit: 10 })
    expect(hits.map((h) => h.id)).toEqual(["a", "b"])
    for (const hit of hits) {
      expect(hit.score).toBeGreaterThan(0)
      expect(hit.score).toBeLessThan(1)
    }
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score)
  })

  it("a memory that only asks ranks below one that states something, in either mode", () => {
    const index = new HybridIndex()
    index.upsert(doc("asked", "Where does Marco live now, in Milan or in Turin?", { asks: true }))
    index.upsert(doc("stated", "Marco lives in Milan now.", { asks: false }))
    index.upsert(doc("other", "Marco's sister lives in Rome."))
    for (const mode of ["fast", "accurate"] as const) {
      const ranked = index.search({ text: "Does Marco live in Milan or in Turin now?", mode, limit: 3 }).map((h) => h.id)
      expect(ranked.indexOf("stated")).toBeLessThan(ranked.indexOf("asked"))
    }
    // Without the flag the question's words win.
    const plain = new HybridIndex()
    plain.upsert(doc("asked", "Where does Marco live now, in Milan or in Turin?"))
    plain.upsert(doc("stated", "Marco lives in Milan now."))
    plain.upsert(doc("other", "Marco's sister lives in Rome."))
    expect(plain.search({ text: "Does Marco live in Milan or in Turin now?", mode: "fast", limit: 2 })[0]!.id).toBe("asked")
  })

  it("a document replaced with the same words but new flags ranks as in an index built with it so", () => {
    const texts = ["Marco lives in Milan now.", "Marco lived in Turin until May.", "Marco's sister lives in Rome.",
      "Where does Marco live now?", "Ines moved to Milan for work.", "The Turin flat had a small balcony."]
    const first = texts.map((text, i) => doc(`m${i}`, text, { keywordExtra: "7 May 2024", position: i, groupKey: "s:1", entities: ["Marco"] }))
    const final = first.map((d, i) => ({ ...d, superseded: i === 1, active: i !== 4, asks: i === 3 }))
    const updated = new HybridIndex()
    for (const d of first) updated.upsert(d)
    for (const d of final) updated.upsert(d)
    // A replacement with other words is indexed anew: its old words no longer find it.
    updated.upsert({ ...final[5]!, text: "The Turin flat had a garden." })
    const fresh = new HybridIndex()
    for (const d of [...final.slice(0, 5), { ...final[5]!, text: "The Turin flat had a garden." }]) fresh.upsert(d)
    for (const query of ["Where does Marco live now?", "Turin", "Milan", "balcony", "garden", "Marco's sister"]) {
      for (const mode of ["fast", "accurate"] as const) {
        const got = updated.search({ text: query, mode, limit: 10 })
        expect(got).toEqual(fresh.search({ text: query, mode, limit: 10 }))
        expect(got.map((h) => h.id)).not.toContain("m4")
      }
    }
    expect(updated.search({ text: "balcony", mode: "fast", limit: 10 })).toEqual([])
    expect(updated.search({ text: "garden", mode: "fast", limit: 10 }).map((h) => h.id)).toEqual(["m5"])
  })

  it("never returns an ineligible memory, and removal is immediate", () => {
    const index = new HybridIndex()
    index.upsert(doc("a", "green tea with honey"))
    index.upsert(doc("b", "green tea with lemon"))
    expect(index.search({ text: "green tea", mode: "accurate", limit: 10, eligible: (id) => id !== "a" }).map((h) => h.id)).toEqual(["b"])
    index.remove("b")
    expect(index.has("b")).toBe(false)
    expect(index.search({ text: "lemon", mode: "accurate", limit: 10 })).toEqual([])
    index.upsert(doc("a", "black coffee"))
    expect(index.search({ text: "green tea", mode: "fast", limit: 10 })).toEqual([])
    expect(index.size).toBe(1)
  })

  it("uses vectors to find paraphrases BM25 misses", () => {
    const index = new HybridIndex()
    index.upsert(doc("a", "Kate adores felines", { vector: Float32Array.from([1, 0, 0]) }))
    index.upsert(doc("b", "Kate repairs engines", { vector: Float32Array.from([0, 1, 0]) }))
    const hits = index.search({ text: "cats", vector: Float32Array.from([0.9, 0.1, 0]), mode: "fast", limit: 1 })
    expect(hits.map((h) => h.id)).toEqual(["a"])
  })

  it("accurate mode lifts the neighbour of a strong match; fast mode does not", () => {
    const index = new HybridIndex()
    const turns = [
      "Melanie: what did you think of the concert in the park",
      "Caroline: honestly the best night of the summer",
      "Melanie: my kids loved the fireworks afterwards",
      "Caroline: I painted a sunrise over the lake",
      "Melanie: the lake looks calm in that painting",
      "Caroline: my brother builds model trains"
    ]
    turns.forEach((text, i) => index.upsert(doc(`t${i}`, text, { groupKey: "s1", position: i })))
    for (let i = 0; i < 6; i++) index.upsert(doc(`n${i}`, `Jon talks about the night shift number ${i}`, { groupKey: `other${i}`, position: 0 }))
    const question = "What did Caroline think of the concert in the park?"
    const fast = index.search({ text: question, mode: "fast", limit: 3 })
    const accurate = index.search({ text: question, mode: "accurate", limit: 3 })
    // On its own words the answer (t1) ranks below an unrelated turn of Caroline's (t3) ...
    expect(fast.slice(0, 2).map((h) => h.id)).toEqual(["t0", "t3"])
    expect(fast.every((h) => h.boost === 0)).toBe(true)
    // ... and accurate mode lifts it right under the match it answers, by its neighbour's score.
    expect(accurate.slice(0, 2).map((h) => h.id)).toEqual(["t0", "t1"])
    expect(accurate[1]!.boost).toBeGreaterThan(0)
    expect(accurate[1]!.score).toBeGreaterThan(fast.find((h) => h.id === "t3")!.score)
  })

  it("after most of its memories are removed (slots renumbered), it ranks as an index built with the rest", () => {
    const people = ["Caroline", "Melanie", "Jon", "Gina", "Nate", "Joanna"]
    const things = ["painted a sunrise", "ran a marathon", "adopted a dog", "studied pottery", "visited the lake", "cooked lentil soup"]
    const all = Array.from({ length: 20_000 }, (_, i) =>
      doc(`m${i}`, `${people[i % 6]} ${things[(i * 7) % 6]} in week ${i % 97} with ${["Pablo", "Zed", "Ruth", "Omar", "Lin"][i % 5]}${Math.floor(i / 5)}`,
        { groupKey: `s${Math.floor(i / 5)}`, position: i }))
    // 5,000 go: the 4,096 holes and a quarter of the slots that make the index close its holes.
    const kept = all.filter((_, i) => i % 4 !== 3)
    const churned = new HybridIndex()
    for (const d of all) churned.upsert(d)
    for (let i = 0; i < all.length; i++) if (i % 4 === 3) churned.remove(all[i]!.id)
    const fresh = new HybridIndex()
    for (const d of kept) fresh.upsert(d)
    expect(churned.size).toBe(kept.length)
    // It closed its holes at least once on the way (slots renumbered).
    expect(churned.slotCount).toBeLessThan(all.length - 4096)
    const questions = ["What did Pablo3600 paint?", "Was Zed1200 at the lake?", "Who adopted a dog?", "When did Gina visit the lake in week 40?"]
    for (const question of questions) {
      for (const mode of ["fast", "accurate"] as const) {
        const got = churned.search({ text: question, mode, limit: 20 })
        expect(got.map((h) => [h.id, h.score.toFixed(9), h.boost.toFixed(9)])).toEqual(
          fresh.search({ text: question, mode, limit: 20 }).map((h) => [h.id, h.score.toFixed(9), h.boost.toFixed(9)])
        )
      }
    }
    // Neighbours are found by their positions after the renumbering (the comparison above would pass without any).
    const lifted = churned.search({ text: "What did Pablo3600 paint?", mode: "accurate", limit: 3 })
    expect(lifted.map((h) => h.id)).toEqual(["m18000", "m18001", "m18002"])
    expect(lifted[1]!.boost).toBeGreaterThan(0)
  })

  it("accurate mode reaches the speaker's own next turn, two positions after the match", () => {
    const index = new HybridIndex()
    const turns = [
      "Joanna: how long have you had your turtles, Nate?",
      "Ha, good question, let me count",
      "Three years now, and they still bring me joy",
      "Joanna: my screenplay is nearly done"
    ]
    turns.forEach((text, i) => index.upsert(doc(`t${i}`, text, { groupKey: "s1", position: i })))
    for (let i = 0; i < 6; i++) index.upsert(doc(`n${i}`, `Joanna wrote scene ${i} of her turtles movie`, { groupKey: `other${i}`, position: 0 }))
    const question = "How long has Nate had his turtles?"
    expect(index.search({ text: question, mode: "fast", limit: 20 }).map((h) => h.id)).not.toContain("t2")
    const accurate = index.search({ text: question, mode: "accurate", limit: 20 }).map((h) => h.id)
    expect(accurate).toContain("t2")
    expect(accurate.indexOf("t2")).toBeLessThan(accurate.indexOf("n0"))
  })

  it("a question that names a speaker ranks what others said about them below what they said, keeping the scale of the answer's score", () => {
    const turns = [
      ["Caroline", "Melanie, your pottery class sounds lovely, and the camping trip too!"],
      ["Caroline", "Did Melanie tell you about the pottery class and the camping?"],
      ["Melanie", "I took up pottery this spring and we went camping at the lake."],
      ["Melanie", "Running in the mornings clears my head."],
      ["Gina", "My store opened last June."]
    ] as const
    const build = (withSpeakers: boolean) => {
      const index = new HybridIndex()
      turns.forEach(([who, text], i) =>
        index.upsert(doc(`t${i}`, `${who}: ${text}`, { entities: ["Caroline", "Melanie"], speaker: withSpeakers ? who : null, groupKey: `s${i}`, position: 0 })))
      return index
    }
    const question = "What activities does Melanie do, like pottery and camping?"
    const plain = build(false).search({ text: question, mode: "accurate", limit: 5 })
    const spoken = build(true).search({ text: question, mode: "accurate", limit: 5 })
    // Without speakers Caroline's turns about Melanie's pottery and camping come first; with them, Melanie's own.
    expect(plain[0]!.id).not.toBe("t2")
    expect(spoken[0]!.id).toBe("t2")
    // Melanie's turn keeps the score it had: the others are lowered, not it raised.
    const scoreOf = (hits: typeof plain, id: string) => hits.find((h) => h.id === id)!.score
    expect(scoreOf(spoken, "t2")).toBeCloseTo(scoreOf(plain, "t2"), 9)
    expect(scoreOf(spoken, "t0")).toBeLessThan(scoreOf(plain, "t0"))
    // A question that names none of the speakers ranks as it did; so does fast mode.
    const other = "Who went camping at the lake?"
    expect(build(true).search({ text: other, mode: "accurate", limit: 5 })).toEqual(build(false).search({ text: other, mode: "accurate", limit: 5 }))
    expect(build(true).search({ text: question, mode: "fast", limit: 5 })).toEqual(build(false).search({ text: question, mode: "fast", limit: 5 }))
  })

  it("a speaker's name with accents or an apostrophe is named by a question that writes it so", () => {
    for (const name of ["Siobhán O'Brien", "José Núñez"]) {
      const index = new HybridIndex()
      // The other speaker's turn says the name and more of the question's words than the answer does.
      index.upsert(doc("answer", `${name}: On the roof.`, { speaker: name, groupKey: "s1", position: 0 }))
      index.upsert(doc("about", `Ana: ${name} keeps her bees somewhere, ${name} told me, maybe the garden?`, { speaker: "Ana", groupKey: "s2", position: 0 }))
      index.upsert(doc("other", "Ana: Bees are hard work.", { speaker: "Ana", groupKey: "s3", position: 0 }))
      expect(index.search({ text: `Where does ${name} keep her bees?`, mode: "accurate", limit: 3 })[0]!.id, name).toBe("answer")
    }
  })

  it("accurate mode lifts the turn that answers a question more than any other neighbour", () => {
    const build = () => {
      const index = new HybridIndex()
      const turns = ["Maria: How often do you work out with your family?", "John: Three times a week, it keeps us on track.", "Maria: Nice."]
      turns.forEach((text, i) => index.upsert(doc(`q${i}`, text, { groupKey: "s1", position: i })))
      const other = ["John: I work out at the gym.", "Maria: Sounds lovely.", "John: Family time keeps me going."]
      other.forEach((text, i) => index.upsert(doc(`o${i}`, text, { groupKey: "s2", position: i })))
      return index
    }
    const question = "How often does John work out with his family?"
    const rankOf = (id: string) => build().search({ text: question, mode: "accurate", limit: 6 }).findIndex((h) => h.id === id)
    const answer = WEIGHTS.answer
    try {
      WEIGHTS.answer = 1
      const plain = rankOf("q1")
      WEIGHTS.answer = answer
      // Without it the answer ranks below a turn that says "work out" and nothing of how often; with it, above.
      expect(plain).toBe(2)
      expect(rankOf("q1")).toBe(1)
    } finally {
      WEIGHTS.answer = answer
    }
  })

  it("dates named in the query favour memories of that time", () => {
    const index = new HybridIndex()
    index.upsert(doc("may", "Gina went hiking", { eventTime: Date.UTC(2023, 4, 12) }))
    index.upsert(doc("july", "Gina went hiking", { eventTime: Date.UTC(2023, 6, 3) }))
    expect(index.search({ text: "Where did Gina go hiking in July 2023?", mode: "accurate", limit: 2 })[0]!.id).toBe("july")
    expect(index.search({ text: "Where did Gina go hiking in May 2023?", mode: "accurate", limit: 2 })[0]!.id).toBe("may")
  })

  it("a month named without its year is the last such month the space has memories of", () => {
    const index = new HybridIndex()
    index.upsert(doc("july", "Gina went hiking", { eventTime: Date.UTC(2023, 6, 3) }))
    index.upsert(doc("may", "Gina went hiking", { eventTime: Date.UTC(2023, 4, 12) }))
    // Asked three years on: July 2026 holds nothing, July 2023 does.
    const referenceTime = Date.UTC(2026, 10, 28)
    for (const [month, id] of [["May", "may"], ["July", "july"]] as const) {
      const hits = index.search({ text: `Where did Gina go hiking in ${month}?`, mode: "accurate", limit: 2, referenceTime })
      expect(hits[0]!.id).toBe(id)
      expect(hits[0]!.boost).toBeGreaterThan(hits[1]!.boost)
    }
  })
})
