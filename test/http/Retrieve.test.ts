import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"
import { readFenced } from "../support/Fenced.ts"

const unique = (label: string) => `${label}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = unique("recall")
  yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })
  const put = (content: string, extra: Record<string, unknown> = {}) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } }).pipe(
      Effect.map((r) => {
        expect(r.status, r.text).toBe(200)
        return r.body.memories[0].memory_id as string
      })
    )
  const retrieve = (body: Record<string, unknown>) => call("POST", "/v1/retrieve", { token: key, offContract: { space_id: spaceId, ...body } })
  const ids = (reply: { body: any }) => reply.body.results.map((r: any) => r.memory_id) as Array<string>
  return { owner, key, spaceId, put, retrieve, ids }
})

eachProfile("retrieve", (it) => {
  it.effect("ranks by relevance, returns the documented fields, honours limit and top_k", () =>
    Effect.gen(function*() {
      const { put, retrieve, ids } = yield* setup
      const violin = yield* put("Audrey started learning the violin last spring.", { metadata: { k: 1 }, timestamp: "2023-06-01T10:00:00Z" })
      for (let i = 0; i < 12; i++) yield* put(`Tim collected ${i + 3} fantasy novels for the book club meeting.`)
      const reply = yield* retrieve({ query: "Which instrument is Audrey learning?" })
      expect(reply.status).toBe(200)
      expect(ids(reply)[0]).toBe(violin)
      const top = reply.body.results[0]
      expect(Object.keys(top).sort()).toEqual(
        ["content", "created_at", "entities", "memory_id", "memory_type", "metadata", "occurred_end", "occurred_start", "relevance_score"]
      )
      expect(top.metadata).toEqual({ k: 1 })
      expect(top.relevance_score).toBeGreaterThan(0)
      expect(top.relevance_score).toBeLessThanOrEqual(1)
      expect(reply.body.usage.input_tokens).toBeGreaterThan(0)
      for (let i = 1; i < reply.body.results.length; i++) {
        expect(reply.body.results[i - 1].relevance_score).toBeGreaterThanOrEqual(reply.body.results[i].relevance_score)
      }
      expect((yield* retrieve({ query: "novels book club" })).body.results).toHaveLength(10)
      expect((yield* retrieve({ query: "novels book club", limit: 3 })).body.results).toHaveLength(3)
      expect((yield* retrieve({ query: "novels book club", limit: 3, top_k: 5 })).body.results).toHaveLength(5)
      expect((yield* retrieve({ query: "novels", limit: 0 })).status).toBe(422)
      expect((yield* retrieve({ query: "novels", top_k: 101 })).status).toBe(422)
      expect((yield* retrieve({})).status).toBe(400)
    }))

  it.effect("a user's past question is never recalled beside what was said about it", () =>
    Effect.gen(function*() {
      const { put, retrieve, ids } = yield* setup
      const asked = yield* put("Where do I live now, in Milan or in Turin?", { user_id: "marco" })
      const said = yield* put("I live in Milan now.", { user_id: "marco" })
      yield* put("My sister lives in Rome.", { user_id: "marco" })
      const reply = yield* retrieve({ query: "Does Marco live in Milan or in Turin now?", user_id: "marco" })
      expect(ids(reply)[0]).toBe(said)
      expect(ids(reply)).not.toContain(asked)
    }))

  it.effect("scope is strict both ways", () =>
    Effect.gen(function*() {
      const { put, retrieve, ids } = yield* setup
      const unscoped = yield* put("Kate likes green tea in the morning.")
      const alice = yield* put("Kate likes green tea with honey.", { user_id: "alice" })
      const bob = yield* put("Kate likes green tea with lemon.", { user_id: "bob", session_id: "s1" })
      const all = ids(yield* retrieve({ query: "green tea" }))
      expect(all).toEqual(expect.arrayContaining([unscoped, alice, bob]))
      expect(ids(yield* retrieve({ query: "green tea", user_id: "alice" }))).toEqual([alice])
      expect(ids(yield* retrieve({ query: "green tea", user_id: "bob" }))).toEqual([bob])
      expect(ids(yield* retrieve({ query: "green tea", session_id: "s1" }))).toEqual([bob])
      expect(ids(yield* retrieve({ query: "green tea", user_id: "alice", session_id: "s1" }))).toEqual([])
      expect(ids(yield* retrieve({ query: "green tea", agent_id: "helper" }))).toEqual([])
    }))

  it.effect("tags in all five modes", () =>
    Effect.gen(function*() {
      const { put, retrieve, ids } = yield* setup
      const none = yield* put("Ravi bakes sourdough bread.")
      const a = yield* put("Ravi bakes rye bread.", { tags: ["a"] })
      const ab = yield* put("Ravi bakes corn bread.", { tags: ["a", "b"] })
      const b = yield* put("Ravi bakes banana bread.", { tags: ["b"] })
      const sorted = (xs: Array<string>) => [...xs].sort()
      const q = (tags: Array<string>, tags_match?: string) =>
        retrieve({ query: "Ravi bakes bread", tags, ...(tags_match ? { tags_match } : {}) }).pipe(Effect.map((r) => sorted(ids(r))))
      expect(yield* q(["a"])).toEqual(sorted([none, a, ab]))
      expect(yield* q(["a"], "any")).toEqual(sorted([none, a, ab]))
      expect(yield* q(["a", "b"], "all")).toEqual(sorted([none, ab]))
      expect(yield* q(["a"], "any_strict")).toEqual(sorted([a, ab]))
      expect(yield* q(["a", "b"], "all_strict")).toEqual(sorted([ab]))
      expect(yield* q(["b"], "exact")).toEqual(sorted([b]))
      expect(yield* q(["b", "a"], "exact")).toEqual(sorted([ab]))
      expect((yield* retrieve({ query: "bread", tags: ["a"], tags_match: "some" })).status).toBe(422)
      expect((yield* call("POST", "/v1/record", {
        token: (yield* setup).key,
        json: { space_id: unique("t"), content: "x", tags: ["svc:internal"] }
      })).status).toBe(422)
    }))

  it.effect("memory_type, min_score, as_of and query_timestamp", () =>
    Effect.gen(function*() {
      const { put, retrieve, ids } = yield* setup
      const early = yield* put("Leo ran the Chicago marathon.")
      const cutoff = new Date().toISOString()
      yield* Effect.sleep("20 millis")
      const late = yield* put("Leo ran the Boston marathon.")
      expect(ids(yield* retrieve({ query: "Leo marathon" }))).toEqual(expect.arrayContaining([early, late]))
      expect(ids(yield* retrieve({ query: "Leo marathon", as_of: cutoff }))).toEqual([early])
      expect((yield* retrieve({ query: "Leo", as_of: "yesterday" })).status).toBe(422)
      expect((yield* retrieve({ query: "Leo", query_timestamp: "31/12/2023" })).status).toBe(422)
      const reranked = yield* retrieve({ query: "Leo marathon", query_timestamp: "2030-01-01T00:00:00Z" })
      expect(ids(reranked).sort()).toEqual([early, late].sort())
      expect(ids(yield* retrieve({ query: "Leo marathon", memory_type: ["note"] }))).toEqual([])
      expect(ids(yield* retrieve({ query: "Leo marathon", memory_type: ["fact"] })).length).toBe(2)
      const scores = (yield* retrieve({ query: "Leo Chicago marathon" })).body.results.map((r: any) => r.relevance_score)
      const floor = (scores[0] + scores[1]) / 2
      const floored = yield* retrieve({ query: "Leo Chicago marathon", min_score: floor })
      expect(floored.body.results).toHaveLength(1)
      for (const r of floored.body.results) expect(r.relevance_score).toBeGreaterThanOrEqual(floor)
    }))

  it.effect("format=block numbers memories and context_max_tokens drops whole ones, lowest first", () =>
    Effect.gen(function*() {
      const { key, put, retrieve } = yield* setup
      for (const city of ["Rome", "Paris", "Tokyo", "Lima"]) yield* put(`Zoe flew to ${city} for a photography workshop.`)
      const block = yield* retrieve({ query: "Zoe photography workshop", format: "block" })
      const lines = readFenced(block.body.context).lines
      expect(lines).toHaveLength(block.body.results.length)
      lines.forEach((line: string, i: number) => expect(line).toBe(`${i + 1}. ${block.body.results[i].content}`))
      expect(block.body.token_estimate).toBe(Math.ceil(block.body.context.length / 4))
      // The budget bounds the whole section, frame included: room for the frame and two lines.
      const frame = block.body.context.length - lines.join("\n").length
      const budget = Math.ceil((frame + lines[0].length + 1 + lines[1].length) / 4)
      const tight = yield* retrieve({ query: "Zoe photography workshop", format: "block", context_max_tokens: budget, receipt: true })
      expect(tight.body.results.map((r: any) => r.memory_id)).toEqual(block.body.results.slice(0, 2).map((r: any) => r.memory_id))
      expect(tight.body.token_estimate).toBeLessThanOrEqual(budget)
      const receipt = yield* call("GET", `/v1/receipts/${tight.body.receipt_id}`, { token: key })
      const budgeted = receipt.body.excluded.filter((e: any) => e.reason === "budget").map((e: any) => e.memory_id)
      expect(budgeted).toEqual(block.body.results.slice(2).map((r: any) => r.memory_id))
      expect(receipt.body.token_accounting).toEqual({ block_tokens: tight.body.token_estimate, budget })
      const results = yield* retrieve({ query: "Zoe photography workshop" })
      expect(results.body.context).toBeUndefined()
    }))

  it.effect("receipts: stored per retrieve, explained per memory, invisible to other organizations", () =>
    Effect.gen(function*() {
      const { key, put, retrieve } = yield* setup
      const ids = []
      for (let i = 0; i < 6; i++) ids.push(yield* put(`Omar planted ${i + 1} olive trees in the garden.`))
      const reply = yield* retrieve({ query: "Omar olive trees", limit: 2, receipt: true, format: "block", context_max_tokens: 1000 })
      expect(reply.body.receipt_id).toBe(reply.headers["x-request-id"])
      const receipt = yield* call("GET", `/v1/receipts/${reply.body.receipt_id}`, { token: key })
      expect(receipt.status).toBe(200)
      expect(receipt.body.request_id).toBe(reply.body.receipt_id)
      expect(receipt.body.included.map((i: any) => i.memory_id)).toEqual(reply.body.results.map((r: any) => r.memory_id))
      for (const inc of receipt.body.included) expect(Object.keys(inc).sort()).toEqual(["memory_id", "relevance_score", "token_estimate"])
      const limited = receipt.body.excluded.filter((e: any) => e.reason === "limit")
      expect(limited.length).toBe(4)
      expect(receipt.body.excluded_truncated).toEqual({})
      expect(receipt.body.token_accounting).toEqual({ block_tokens: reply.body.token_estimate, budget: 1000 })
      expect(receipt.body.engine_stages).toBe(false)

      const included = yield* call("GET", `/v1/receipts/${reply.body.receipt_id}/explain?memory_id=${receipt.body.included[0].memory_id}`, { token: key })
      expect(included.body).toMatchObject({ memory_id: receipt.body.included[0].memory_id, outcome: "included", rank: 1 })
      const dropped = yield* call("GET", `/v1/receipts/${reply.body.receipt_id}/explain?memory_id=${limited[0].memory_id}`, { token: key })
      expect(dropped.body).toMatchObject({ outcome: "excluded", reason: "limit" })

      // Without receipt: true there is no receipt_id, but the receipt is still stored.
      const plain = yield* retrieve({ query: "Omar olive trees" })
      expect(plain.body.receipt_id).toBeUndefined()
      expect((yield* call("GET", `/v1/receipts/${plain.headers["x-request-id"]}`, { token: key })).status).toBe(200)

      const other = yield* signup("other")
      const otherKey = (yield* createKey(other.token)).raw_key
      const stolen = yield* call("GET", `/v1/receipts/${reply.body.receipt_id}`, { token: otherKey })
      expect(stolen.status).toBe(404)
      expect((yield* call("GET", "/v1/receipts/req_never", { token: key })).status).toBe(404)

      // A request id is the client's to choose: another organization reusing this one gets a receipt of its own
      // and leaves this one as it was.
      yield* call("POST", "/v1/spaces", { token: otherKey, json: { space_id: "other-space" } })
      const reused = yield* call("POST", "/v1/retrieve", {
        token: otherKey,
        json: { space_id: "other-space", query: "anything" },
        headers: { "x-request-id": reply.body.receipt_id, "content-type": "application/json" }
      })
      expect(reused.status).toBe(200)
      expect(reused.headers["x-request-id"]).toBe(reply.body.receipt_id)
      const mine = yield* call("GET", `/v1/receipts/${reply.body.receipt_id}`, { token: key })
      expect(mine.status).toBe(200)
      expect(mine.body).toEqual(receipt.body)
      const theirs = yield* call("GET", `/v1/receipts/${reply.body.receipt_id}`, { token: otherKey })
      expect(theirs.status).toBe(200)
      expect(theirs.body.included).toEqual([])
    }))

  it.effect("a full receipt adds the engine's stages: candidate_cap past the pool, one reason per memory", () =>
    Effect.gen(function*() {
      const { key, put, retrieve } = yield* setup
      for (let i = 0; i < 60; i++) yield* put(`Noor baked ${i + 2} loaves of rye bread for the market.`)
      // Facts only, without notes: a consolidation run on a slow machine must not add `dedup` or note candidates.
      const factsOnly = { memory_type: ["fact"], prefer_observations: false }
      const basic = yield* retrieve({ query: "Noor rye bread loaves", limit: 1, receipt: true, ...factsOnly })
      const basicReceipt = (yield* call("GET", `/v1/receipts/${basic.body.receipt_id}`, { token: key })).body
      expect(basicReceipt.engine_stages).toBe(false)
      expect(new Set(basicReceipt.excluded.map((e: any) => e.reason))).toEqual(new Set(["limit"]))

      for (const mode of ["accurate", "fast"]) {
        const full = yield* retrieve({ query: "Noor rye bread loaves", limit: 1, receipt: true, receipt_detail: "full", mode, ...factsOnly })
        expect(full.status).toBe(200)
        const receipt = (yield* call("GET", `/v1/receipts/${full.body.receipt_id}`, { token: key })).body
        expect(receipt.engine_stages).toBe(true)
        const capped = receipt.excluded.filter((e: any) => e.reason === "candidate_cap")
        // limit 1 keeps a pool of 51 candidates: the other 9 matching memories are past the cap.
        expect(capped).toHaveLength(9)
        expect(capped[0].detail).toBe("rank 52 beyond the candidate cap of 51")
        const everyId = [...receipt.included, ...receipt.excluded].map((e: any) => e.memory_id)
        expect(new Set(everyId).size).toBe(everyId.length)
        expect(everyId).toHaveLength(60)
      }
    }))

  it.effect("legacy /v1/search answers scores in 0..1", () =>
    Effect.gen(function*() {
      const { key, spaceId, put } = yield* setup
      const id = yield* put("Priya teaches yoga at the community center.")
      const reply = yield* call("POST", "/v1/search", { token: key, json: { space_id: spaceId, query: "yoga teacher", limit: 5, filters: { type: "fact" } } })
      expect(reply.status).toBe(200)
      expect(reply.body.results[0].memory_id).toBe(id)
      for (const r of reply.body.results) {
        expect(Object.keys(r).sort()).toEqual(["content", "created_at", "memory_id", "memory_type", "metadata", "relevance_score"])
        expect(r.relevance_score).toBeGreaterThanOrEqual(0)
        expect(r.relevance_score).toBeLessThanOrEqual(1)
      }
    }))
})
