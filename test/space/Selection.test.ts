/**
 * The note-versus-facts choice of a recall (#35): a note stands in for the
 * facts behind it only where it ranks at or above each of them and gives at
 * least as much score per token; otherwise the facts go in and the note is
 * left out; a note whose facts the recall cannot return is never weighed.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Recall } from "../../src/domain/SpaceProtocol.ts"
import { select } from "../../src/space/Selection.ts"

const recall = (extra: Partial<Recall> = {}): Recall => ({
  query: "q",
  limit: 10,
  memoryTypes: null,
  userId: null,
  agentId: null,
  sessionId: null,
  tags: null,
  tagsMatch: "any",
  minScore: null,
  preferObservations: true,
  asOf: null,
  queryTime: null,
  mode: "accurate",
  full: false,
  ...extra
})

/** A space of facts f1..f4, a note n1 made from f1 and f2, and a summary s1 over n1. */
const types: Record<string, "fact" | "note" | "summary"> = { f1: "fact", f2: "fact", f3: "fact", f4: "fact", n1: "note", s1: "summary" }
const sources: Record<string, ReadonlyArray<string>> = { n1: ["f1", "f2"], s1: ["f1", "f2"] }
const choose = (ranked: ReadonlyArray<[string, number]>, tokens: Record<string, number>, extra: Partial<Recall> = {}) =>
  select(ranked.map(([id, score]) => ({ id, score })), (id) => types[id], recall(extra), (id) => sources[id], (id) => tokens[id])
const ids = (chosen: ReturnType<typeof choose>) => chosen.included.map((hit) => hit.id)
const dedup = (chosen: ReturnType<typeof choose>) => chosen.excluded.filter((e) => e.reason === "dedup").map((e) => [e.memory_id, e.detail])

describe("a note against the facts behind it", () => {
  it("stands in for them where it ranks at or above each and says them in fewer words", () => {
    const chosen = choose([["n1", 0.9], ["f1", 0.8], ["f3", 0.7], ["f2", 0.5]], { n1: 20, f1: 15, f2: 15, f3: 10 })
    expect(ids(chosen)).toEqual(["n1", "f3"])
    expect(dedup(chosen)).toEqual([
      ["f1", "covered by n1, which ranks at or above it (score 0.9000 against 0.8000) in 20 tokens for the 30 of its 2 facts"],
      ["f2", "covered by n1, which ranks at or above it (score 0.9000 against 0.8000) in 20 tokens for the 30 of its 2 facts"]
    ])
  })

  it("is left out where one of its facts ranks above it: a fact is never dropped for a note that ranks below it", () => {
    const chosen = choose([["f1", 0.95], ["n1", 0.9], ["f3", 0.7], ["f2", 0.5]], { n1: 5, f1: 15, f2: 15, f3: 10 })
    expect(ids(chosen)).toEqual(["f1", "f3", "f2"])
    expect(dedup(chosen)).toEqual([["n1", "its facts rank above it for this query (score 0.9000 against 0.9500)"]])
  })

  it("is left out where it ranks first but its facts give more per token", () => {
    // 0.9 in 60 tokens against 1.3 in 30: the facts say the same for less.
    const chosen = choose([["n1", 0.9], ["f1", 0.8], ["f3", 0.7], ["f2", 0.5]], { n1: 60, f1: 15, f2: 15, f3: 10 })
    expect(ids(chosen)).toEqual(["f1", "f3", "f2"])
    expect(dedup(chosen)).toEqual([["n1", "its 2 facts serve this query better per token (score 0.9000 in 60 tokens for the 30 of its 2 facts)"]])
  })

  it("ranks no higher than the best of its facts: facts that answer better stay above it", () => {
    // n1 stands in for f1 and f2 (0.9 * 30 >= (0.3 + 0.3) * 10), but its facts rank at 0.3 at best (f2 unranked: the
    // lowest candidate's score), so it is placed there, after f3 and f4, and reported at that score.
    const chosen = choose([["n1", 0.9], ["f3", 0.7], ["f4", 0.6], ["f1", 0.3]], { n1: 10, f1: 15, f2: 15, f3: 10, f4: 10 })
    expect(chosen.included).toEqual([{ id: "f3", score: 0.7 }, { id: "f4", score: 0.6 }, { id: "n1", score: 0.3 }])
    expect(dedup(chosen)).toEqual([["f1", "covered by n1, which ranks at or above it (score 0.9000 against 0.3000) in 10 tokens for the 30 of its 2 facts"]])
    // Without the preference nothing is weighed or moved.
    expect(ids(choose([["n1", 0.9], ["f3", 0.7], ["f1", 0.3]], { n1: 10, f1: 15, f2: 15, f3: 10 }, { preferObservations: false }))).toEqual(["n1", "f3", "f1"])
  })

  it("counts a fact ranked below the candidates at the lowest candidate's score", () => {
    // f2 is not ranked: it counts at 0.1. 0.9 * 30 >= (0.8 + 0.1) * 25, so the note stands in for f1.
    const stands = choose([["n1", 0.9], ["f1", 0.8], ["f3", 0.1]], { n1: 25, f1: 15, f2: 15, f3: 10 })
    expect(ids(stands)).toEqual(["n1", "f3"])
    // A longer note does not: 0.9 * 30 < 0.9 * 31.
    const left = choose([["n1", 0.9], ["f1", 0.8], ["f3", 0.1]], { n1: 31, f1: 15, f2: 15, f3: 10 })
    expect(ids(left)).toEqual(["f1", "f3"])
  })

  it("weighs a summary by the facts beneath its notes, and nothing without preference or where facts are not asked for", () => {
    expect(ids(choose([["s1", 0.9], ["f1", 0.8], ["f2", 0.7]], { s1: 100, f1: 15, f2: 15 }))).toEqual(["f1", "f2"])
    const raw = choose([["n1", 0.9], ["f1", 0.95], ["f2", 0.5]], { n1: 5, f1: 15, f2: 15 }, { preferObservations: false })
    expect(ids(raw)).toEqual(["n1", "f1", "f2"])
    expect(dedup(raw)).toEqual([])
    // Notes alone: the note is never weighed against facts the recall cannot return.
    expect(ids(choose([["n1", 0.9]], { n1: 500, f1: 15, f2: 15 }, { memoryTypes: ["note"] }))).toEqual(["n1"])
  })

  it("is weighed by rank alone while the lengths are unknown (a space still reading its texts)", () => {
    expect(ids(choose([["n1", 0.9], ["f1", 0.8], ["f2", 0.5]], {}))).toEqual(["n1"])
    expect(ids(choose([["f1", 0.95], ["n1", 0.9], ["f2", 0.5]], {}))).toEqual(["f1", "f2"])
  })
})
