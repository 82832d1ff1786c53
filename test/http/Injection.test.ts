/**
 * Memory-injection figures over real HTTP on both profiles: every rendered
 * block counts its length/4 tokens, and the part repeating the start of the
 * scope's previous block is `cache_prefix_tokens`; `block_order: stable`
 * lists a block in stored order, so two questions recalling the same
 * memories render the same block and the second is wholly cache-eligible.
 */
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"
import { readFenced } from "../support/Fenced.ts"

const FACTS = [
  "Ingrid grows purple tomatoes in her greenhouse.",
  "Ingrid's neighbour Tomas repairs sailboats in the harbour.",
  "The harbour festival takes place every August.",
  "Tomas taught Ingrid to sail last summer.",
  "Ingrid sells her tomatoes at the Saturday market."
]

eachProfile("memory injection figures", (it) => {
  it.effect("stable block order makes repeated blocks cache-eligible; breakdown has two totals per space", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const stamp = Date.now()
      const spaces = { relevance: `inj-rel-${stamp}`, stable: `inj-stable-${stamp}` }
      for (const spaceId of Object.values(spaces)) {
        for (const content of FACTS) {
          const wrote = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content } })
          expect(wrote.status, wrote.text).toBe(200)
        }
      }
      const block = (spaceId: string, query: string, order: "relevance" | "stable") =>
        call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query, limit: 50, format: "block", block_order: order } })
      const contexts: Record<string, Array<string>> = { relevance: [], stable: [] }
      for (const order of ["relevance", "stable"] as const) {
        for (const query of ["Who repairs sailboats?", "Where are the tomatoes sold?"]) {
          const reply = yield* block(spaces[order], query, order)
          expect(reply.status, reply.text).toBe(200)
          expect(reply.body.context.length).toBeGreaterThan(0)
          contexts[order]!.push(reply.body.context)
          // The results stay ranked by relevance; a stable block lists the same memories as they were stored.
          const listed = order === "relevance"
            ? reply.body.results
            : [...reply.body.results].sort((a: { created_at: string; memory_id: string }, b: { created_at: string; memory_id: string }) =>
              a.created_at === b.created_at ? (a.memory_id < b.memory_id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1)
          expect(readFenced(reply.body.context).lines).toEqual(listed.map((r: { content: string }, i: number) => `${i + 1}. ${r.content}`))
        }
      }
      // Relevance order differs between the questions; stored order does not.
      expect(contexts.relevance![0]).not.toBe(contexts.relevance![1])
      expect(contexts.stable![0]).toBe(contexts.stable![1])

      const breakdown = yield* call("GET", "/v1/usage/breakdown", { token: owner.token })
      expect(breakdown.status, breakdown.text).toBe(200)
      const of = (spaceId: string) => breakdown.body.spaces.find((s: { space_id: string }) => s.space_id === spaceId)
      const tokens = (text: string) => Math.ceil(text.length / 4)
      expect(of(spaces.stable)).toMatchObject({
        injected_tokens: 2 * tokens(contexts.stable![0]!),
        cache_prefix_tokens: Math.floor(contexts.stable![0]!.length / 4)
      })
      const relevance = of(spaces.relevance)
      expect(relevance.injected_tokens).toBe(tokens(contexts.relevance![0]!) + tokens(contexts.relevance![1]!))
      expect(relevance.cache_prefix_tokens).toBeLessThan(of(spaces.stable).cache_prefix_tokens)
      expect(breakdown.body.memory_injection).toEqual({
        injections: 4,
        injected_tokens: relevance.injected_tokens + of(spaces.stable).injected_tokens,
        cache_prefix_tokens: relevance.cache_prefix_tokens + of(spaces.stable).cache_prefix_tokens
      })
      const series = yield* call("GET", "/v1/usage?granularity=hour", { token: owner.token })
      expect(series.body.memory_injection).toEqual(breakdown.body.memory_injection)
      expect(series.body.series.reduce((n: number, p: { memory_injection: { injections: number } }) => n + p.memory_injection.injections, 0)).toBe(4)

      // A results-format retrieve renders no block and counts nothing; a bad order is a 422.
      expect((yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaces.stable, query: "tomatoes" } })).status).toBe(200)
      const after = yield* call("GET", "/v1/usage/breakdown", { token: owner.token })
      expect(after.body.memory_injection.injections).toBe(4)
      const bad = yield* call("POST", "/v1/retrieve", { token: key, offContract: { space_id: spaces.stable, query: "x", format: "block", block_order: "random" } })
      expect(bad.status).toBe(422)
      expect(bad.body.error.code).toBe("validation_error")
      // The proxy takes it as a tunable; a header that does not parse is 400 invalid_tunable.
      const header = yield* call("POST", "/v1/chat/completions", {
        token: key,
        headers: { "x-svc-block-order": "sideways" },
        json: { messages: [{ role: "user", content: "hi" }] }
      })
      expect(header.status, header.text).toBe(400)
      expect(header.body.error.code).toBe("invalid_tunable")
      expect(header.body.error.message).toContain("X-Svc-Block-Order")
    }))
})
