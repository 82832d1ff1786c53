import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { answer, LocalEngine, NOTHING_REMEMBERED, pickMemories } from "../../src/models/LocalEngine.ts"

const request = (question: string, memories: ReadonlyArray<string>, maxTokens?: number) => ({
  system: "",
  messages: [{ role: "user" as const, content: question }],
  memories,
  maxTokens,
  extra: {}
})

describe("the local engine", () => {
  it("quotes the memories sharing most words with the question, never questions or its own labels", () => {
    const picked = pickMemories("Where does Rex like to run?", [
      "What did Alice tell you about Rex?",
      "Assistant: From memory: Rex likes to run on the beach.",
      "Alice bought a new kettle.",
      "Rex likes to run on the beach."
    ])
    expect(picked[0]).toBe("Rex likes to run on the beach.")
    expect(picked).not.toContain("What did Alice tell you about Rex?")
    expect(picked.filter((m) => m.endsWith(":"))).toEqual([])
    expect(new Set(picked).size).toBe(picked.length)
  })

  it("says so when nothing is remembered, and honours max tokens while streaming word by word", () =>
    Effect.gen(function*() {
      expect(answer(request("Anything?", []))).toBe(NOTHING_REMEMBERED)
      const whole = yield* LocalEngine.complete({} as any, request("Where does Rex run?", ["Rex runs on the beach every morning."]))
      expect(whole.text).toBe("From memory: Rex runs on the beach every morning.")
      expect(whole.stopReason).toBe("stop")
      const parts = yield* Stream.runCollect(yield* LocalEngine.stream({} as any, request("Where does Rex run?", ["Rex runs on the beach every morning."], 3)))
      const deltas = [...parts].filter((p) => p._tag === "Delta")
      expect(deltas).toHaveLength(3)
      expect([...parts].at(-1)).toMatchObject({ _tag: "Done", stopReason: "length", usage: { output_tokens: 3 } })
    }))
})
