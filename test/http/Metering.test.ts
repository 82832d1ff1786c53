/**
 * Metering over real HTTP, on both profiles: the rate-limit and credit
 * headers on every response, the ledger at the spec's rates, a retried
 * request charged once, 50 parallel callers against a small allowance never
 * overdrawing it, free operations working once credits are spent, the
 * per-organization rate limit with Retry-After, usage, and feedback.
 */
import { expect } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const plansFile = (plans: ReadonlyArray<Record<string, unknown>>) => {
  const path = join(mkdtempSync(join(tmpdir(), "engram-plans-")), "plans.json")
  writeFileSync(path, JSON.stringify({ default_plan: String(plans[0]!.plan_id), plans }))
  return path
}

const SMALL = plansFile([
  { plan_id: "small", name: "Small", price_per_month_usd: 0, credits: 20, rate_limit_per_min: 1000, max_spaces: 5 },
  { plan_id: "big", name: "Big", price_per_month_usd: 10, credits: 100000, rate_limit_per_min: 5000, max_spaces: 50 }
])
const SLOW = plansFile([
  { plan_id: "slow", name: "Slow", price_per_month_usd: 0, credits: 1000, rate_limit_per_min: 8, max_spaces: 5 }
])

const HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-window", "x-credits-remaining"] as const

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  return { owner, key }
})

eachProfile("metering: credits", (it) => {
  it.effect("every response carries the rate-limit and credit headers; an unauthenticated one reports zeros", () =>
    Effect.gen(function*() {
      const { key, owner } = yield* setup
      const replies: Array<{ status: number; headers: Record<string, string>; text: string }> = [
        yield* call("GET", "/v1/spaces", { token: key }),
        yield* call("GET", "/v1/models", { token: key }),
        yield* call("GET", "/v1/orgs/me", { token: owner.token }),
        yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: "nowhere", query: "x" } }),
        yield* call("GET", "/v1/usage/me", { token: key })
      ]
      // Every GET route of the OpenAPI document, one of each family, plus the routes served beside it.
      yield* call("POST", "/v1/spaces", { token: key, json: { space_id: "headers" } })
      const openapi = yield* callRaw("GET", "/openapi.json")
      const paths = Object.entries(openapi.body.paths as Record<string, Record<string, unknown>>)
        .filter(([path, methods]) => "get" in methods && path.startsWith("/v1/"))
        .map(([path]) => path.replace("{space_id}", "headers").replace(/\{[a-z_]+\}/g, "x"))
      expect(paths.length).toBeGreaterThan(20)
      for (const path of paths) {
        // A public route (the catalog of space types) answers anyone, and reports zeros as unauthenticated.
        const anonymous = yield* callRaw("GET", path)
        if (anonymous.status !== 401) {
          for (const header of HEADERS) expect(anonymous.headers[header], `${header} on ${path}`).toMatch(/^\d+$/)
          expect(anonymous.headers["x-ratelimit-limit"]).toBe("0")
          continue
        }
        replies.push(yield* callRaw("GET", path, { token: owner.token }))
      }
      replies.push(yield* call("POST", "/v1/chat/completions", {
        token: key,
        json: { messages: [{ role: "user", content: "hello" }], memory: false, auto_record: false }
      }))
      replies.push(yield* call("POST", "/mcp", {
        token: key,
        headers: { accept: "application/json, text/event-stream" },
        json: { jsonrpc: "2.0", id: 1, method: "tools/list" }
      }))
      replies.push(yield* call("POST", "/v1/feedback", { token: key, json: { message: "headers everywhere" } }))
      for (const reply of replies) {
        for (const header of HEADERS) expect(reply.headers[header], `${header} on ${reply.status} ${reply.text.slice(0, 200)}`).toMatch(/^\d+$/)
        expect(reply.headers["x-ratelimit-limit"], `${reply.status} ${reply.text.slice(0, 200)}`).toBe("1000")
        expect(reply.headers["x-ratelimit-window"]).toBe("60")
      }
      // Unauthenticated: the sign-in routes, the payment processor's callback.
      for (const reply of [
        yield* call("POST", "/auth/login", { json: { email: "nobody@example.test", password: "not this one" } }),
        yield* call("POST", "/v1/billing/webhook", { raw: "{}", headers: { "stripe-signature": "t=1,v1=x" } })
      ]) {
        for (const header of HEADERS) expect(reply.headers[header], `${header} on ${reply.text}`).toMatch(/^\d+$/)
        expect(reply.headers["x-ratelimit-limit"]).toBe("0")
      }
      const anonymous = yield* call("GET", "/v1/spaces")
      expect(anonymous.status).toBe(401)
      for (const header of HEADERS) expect(anonymous.headers[header]).toBeDefined()
      expect(anonymous.headers["x-ratelimit-limit"]).toBe("0")
      expect(anonymous.headers["x-credits-remaining"]).toBe("0")
    }))

  it.effect("stored memories and searches are debited at the spec's rates; a retried request is charged once", () =>
    Effect.gen(function*() {
      const { key, owner } = yield* setup
      const wrote = yield* call("POST", "/v1/record", { token: key, json: { space_id: "ledger", content: "Maya adopted a grey cat named Pixel." } })
      expect(wrote.status, wrote.text).toBe(200)
      const stored = wrote.body.memories.length
      expect(stored).toBeGreaterThan(0)
      expect(Number(wrote.headers["x-credits-remaining"])).toBe(20 - 2 * stored)
      const search = { token: key, json: { space_id: "ledger", query: "cat" }, headers: { "x-request-id": `retry-${Date.now()}` } }
      const first = yield* call("POST", "/v1/retrieve", search)
      expect(first.status).toBe(200)
      const again = yield* call("POST", "/v1/retrieve", search)
      expect(again.status).toBe(200)
      const usage = yield* call("GET", "/v1/usage/me", { token: key })
      expect(usage.body).toEqual({ credits_remaining: 20 - 2 * stored - 1, credits_limit: 20, credits_used: 2 * stored + 1, rate_limit_per_min: 1000 })
      expect(Number(again.headers["x-credits-remaining"])).toBe(20 - 2 * stored - 1)

      // Organization usage needs a session; it breaks the credits down per operation and space.
      expect((yield* call("GET", "/v1/usage/breakdown", { token: key })).body.error.code).toBe("session_required")
      expect((yield* call("GET", "/v1/usage", { token: key })).body.error.code).toBe("session_required")
      const breakdown = yield* call("GET", "/v1/usage/breakdown", { token: owner.token })
      expect(breakdown.status, breakdown.text).toBe(200)
      expect(breakdown.body.operations).toEqual([
        { op_type: "memory_stored", count: stored, credits: 2 * stored },
        { op_type: "search", count: 1, credits: 1 }
      ])
      expect(breakdown.body.spaces).toEqual([{ space_id: "ledger", credits: 2 * stored + 1, operations: { memory_stored: stored, search: 1 }, injected_tokens: 0, cache_prefix_tokens: 0 }])
      const series = yield* call("GET", "/v1/usage?granularity=hour&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z", { token: owner.token })
      expect(series.status, series.text).toBe(200)
      expect(series.body.series).toEqual([])
      const now = yield* call("GET", "/v1/usage", { token: owner.token })
      expect(now.body.credits_used).toBe(2 * stored + 1)
      expect((yield* call("GET", "/v1/usage?from=2026-02-01&to=2026-01-01", { token: owner.token })).body.error.code).toBe("validation_error")
    }))

  it.effect("50 parallel searches against the last credits never overdraw them; free operations keep working", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      const wrote = yield* call("POST", "/v1/record", { token: key, json: { space_id: "spend", content: "Omar plays the oud on Fridays." } })
      expect(wrote.status).toBe(200)
      const left = (yield* call("GET", "/v1/usage/me", { token: key })).body.credits_remaining as number
      const replies = yield* Effect.all(
        Array.from({ length: 50 }, () => call("POST", "/v1/retrieve", { token: key, json: { space_id: "spend", query: "oud" } })),
        { concurrency: 50 }
      )
      const ok = replies.filter((r) => r.status === 200)
      const refused = replies.filter((r) => r.status === 429)
      expect(ok.length).toBe(left)
      expect(refused.length).toBe(50 - left)
      for (const reply of refused) {
        expect(reply.body.error.code).toBe("rate_limited")
        expect(Number(reply.headers["retry-after"])).toBeGreaterThan(0)
        expect(reply.headers["x-credits-remaining"]).toBe("0")
      }
      const usage = yield* call("GET", "/v1/usage/me", { token: key })
      expect(usage.status).toBe(200)
      expect(usage.body.credits_used).toBe(20) // the documented bound for searches: not one credit over
      expect(usage.body.credits_remaining).toBe(0)

      // Metered calls are refused; the free ones keep working.
      expect((yield* call("POST", "/v1/record", { token: key, json: { space_id: "spend", content: "More." } })).status).toBe(429)
      expect((yield* call("GET", "/v1/models", { token: key })).status).toBe(200)
      expect((yield* call("GET", "/v1/spaces/spend/chat-settings", { token: key })).status).toBe(200)
      expect((yield* call("POST", "/v1/feedback", { token: key, json: { message: "out of credits" } })).status).toBe(202)
    }))

  it.effect("feedback: 202 received, strict fields, a path not a URL, at most 10 an hour per member", () =>
    Effect.gen(function*() {
      const { key, owner } = yield* setup
      const sent = yield* call("POST", "/v1/feedback", { token: owner.token, json: { category: "idea", message: "Dark mode", page: "/settings" } })
      expect(sent.status, sent.text).toBe(202)
      expect(sent.body).toEqual({ status: "received" })
      for (const body of [{ message: "x", email: "a@b.test" }, { message: "   " }, { message: "" }, { message: "x", page: "https://evil.test/x" }, {
        message: "x",
        category: "praise"
      }, { message: "x".repeat(4001) }]) {
        const refused = yield* call("POST", "/v1/feedback", { token: key, offContract: body })
        expect(refused.status, JSON.stringify(body)).toBe(422)
        expect(refused.body.error.code).toBe("validation_error")
      }
      for (let i = 1; i < 10; i++) expect((yield* call("POST", "/v1/feedback", { token: owner.token, json: { message: `note ${i}` } })).status).toBe(202)
      const eleventh = yield* call("POST", "/v1/feedback", { token: owner.token, json: { message: "one more" } })
      expect(eleventh.status).toBe(429)
      expect(eleventh.body.error.code).toBe("too_many_attempts")
      expect(Number(eleventh.headers["retry-after"])).toBeGreaterThan(0)
    }))

  it.effect("an organization holds at most its plan's max_spaces: created or first written to", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      for (let i = 0; i < 4; i++) {
        expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: `cap-${i}-${Date.now()}` } })).status).toBe(201)
      }
      // The fifth comes from a write to a new space.
      const fifth = `cap-write-${Date.now()}`
      expect((yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: fifth, items: [{ content: "Ada keeps bees." }] } })).status).toBe(202)
      const sixth = yield* call("POST", "/v1/spaces", { token: key, json: { space_id: `cap-6-${Date.now()}` } })
      expect(sixth.status, sixth.text).toBe(409)
      expect(sixth.body.error.code).toBe("space_limit_reached")
      const written = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: `cap-w6-${Date.now()}`, items: [{ content: "Ada keeps bees." }] } })
      expect(written.status).toBe(409)
      expect(written.body.error.code).toBe("space_limit_reached")
      // Writing to a space it holds still works; deleting one makes room.
      expect((yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: fifth, items: [{ content: "Ada sells honey." }] } })).status).toBe(202)
      expect((yield* call("DELETE", `/v1/spaces/${fifth}`, { token: key })).status).toBe(204)
      expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: `cap-7-${Date.now()}` } })).status).toBe(201)
    }))
}, { plansConfig: Option.some(SMALL) })

eachProfile("metering: the rate limit", (it) => {
  it.effect("past its requests per minute an organization gets 429 rate_limited with Retry-After; another is unaffected", () =>
    Effect.gen(function*() {
      const { key } = yield* setup
      const other = yield* setup
      const replies = []
      for (let i = 0; i < 10; i++) replies.push(yield* call("GET", "/v1/spaces", { token: key }))
      // Creating the key was the organization's first request of the minute: seven remain.
      expect(replies.slice(0, 7).map((r) => r.status)).toEqual(Array(7).fill(200))
      expect(replies.slice(0, 7).map((r) => Number(r.headers["x-ratelimit-remaining"]))).toEqual([6, 5, 4, 3, 2, 1, 0])
      for (const refused of replies.slice(7)) {
        expect(refused.status).toBe(429)
        expect(refused.body.error.code).toBe("rate_limited")
        expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
        expect(Number(refused.headers["retry-after"])).toBeLessThanOrEqual(60)
        expect(refused.headers["x-ratelimit-remaining"]).toBe("0")
      }
      const fine = yield* call("GET", "/v1/spaces", { token: other.key })
      expect(fine.status).toBe(200)
      expect(fine.headers["x-ratelimit-limit"]).toBe("8")
    }))
}, { plansConfig: Option.some(SLOW) })
