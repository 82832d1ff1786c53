import { describe, expect, it } from "@effect/vitest"
import { engineExclusions } from "../../src/space/EngineStages.ts"

const logit = (x: number) => 1 / (1 + Math.exp(-x))

describe("engine stages of a full receipt", () => {
  // Final order a, b, c; before the boosts c led (fused 2.0), then a (1.5), then b (1.0).
  const considered = [
    { id: "a", score: logit(3), boost: 1.5 },
    { id: "b", score: logit(2.5), boost: 1.5 },
    { id: "c", score: logit(2), boost: 0 }
  ]
  const limited = [
    { memory_id: "b", reason: "limit" as const, detail: "rank 2 beyond limit 1" },
    { memory_id: "c", reason: "limit" as const, detail: "rank 3 beyond limit 1" }
  ]

  it("names the rerank when it pushed a first-stage winner out of the limit", () => {
    const out = engineExclusions({ considered, beyondCap: [], cap: 3, limit: 1, excluded: limited, accurateTop: null, included: ["a"] })
    expect(out.find((e) => e.memory_id === "c")).toEqual({
      memory_id: "c",
      reason: "rerank_rank",
      detail: "first-stage rank 1 was within limit 1; rank 3 after the rerank (neighbours, entities, speakers and dates)"
    })
    expect(out.find((e) => e.memory_id === "b")?.reason).toBe("limit")
  })

  it("lists hits past the candidate cap, and in fast mode what the accurate stages would have ranked", () => {
    const out = engineExclusions({
      considered,
      beyondCap: [{ id: "d", score: 0.1, boost: 0 }],
      cap: 3,
      limit: 1,
      excluded: limited,
      accurateTop: ["e"],
      included: ["a"]
    })
    expect(out.find((e) => e.memory_id === "d")).toMatchObject({ reason: "candidate_cap", detail: "rank 4 beyond the candidate cap of 3" })
    expect(out.find((e) => e.memory_id === "e")).toMatchObject({ reason: "engine_budget" })
    const again = engineExclusions({ considered, beyondCap: [], cap: 3, limit: 1, excluded: limited, accurateTop: ["a", "c"], included: ["a"] })
    expect(again.filter((e) => e.reason === "engine_budget")).toEqual([])
  })
})
