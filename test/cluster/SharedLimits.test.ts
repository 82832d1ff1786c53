/**
 * Two real `engram serve` processes on one PostgreSQL and Redis count one
 * organization's requests in one window: requests alternating between the
 * nodes see one X-RateLimit-Remaining going down, and the limit refuses the
 * request past it whichever node it reaches.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClusterNode, clusterDatabase, clusterSkipReason, startCluster } from "../support/ClusterNodes.ts"
import { signupWithKey } from "../support/Process.ts"

const LIMIT = 12
const plans = join(mkdtempSync(join(tmpdir(), "engram-shared-limits-")), "plans.json")
writeFileSync(plans, JSON.stringify({
  default_plan: "tight",
  plans: [{ plan_id: "tight", name: "Tight", price_per_month_usd: 0, credits: 100000, rate_limit_per_min: LIMIT, max_spaces: 10 }]
}))

describe.skipIf(clusterSkipReason !== undefined)("two nodes sharing Redis", () => {
  let nodes: Array<ClusterNode> = []
  let drop = async () => {}

  beforeAll(async () => {
    const database = await clusterDatabase()
    drop = database.drop
    nodes = await startCluster(2, database.url, { PLANS_CONFIG: plans })
  }, 180_000)

  afterAll(async () => {
    for (const node of nodes) if (node.running()) await node.stop()
    await drop()
  }, 120_000)

  it("see one rate limit per organization", async () => {
    // Clear of a minute boundary, so the window holds only this test's requests.
    const intoMinute = Date.now() % 60_000
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 500))
    const key = await signupWithKey(nodes[0]!.url, `limits-${Date.now()}@example.test`)
    // Creating the key was the organization's first counted request.
    const replies: Array<{ node: string; status: number; remaining: string | null; retryAfter: string | null; limit: string | null }> = []
    for (let i = 0; i < LIMIT + 4; i++) {
      const node = nodes[i % 2]!
      const response = await fetch(`${node.url}/v1/spaces`, { headers: { authorization: `Bearer ${key}` } })
      await response.text()
      replies.push({
        node: node.name,
        status: response.status,
        remaining: response.headers.get("x-ratelimit-remaining"),
        retryAfter: response.headers.get("retry-after"),
        limit: response.headers.get("x-ratelimit-limit")
      })
    }
    const allowed = replies.filter((r) => r.status === 200)
    expect(allowed, JSON.stringify(replies)).toHaveLength(LIMIT - 1)
    expect(replies.slice(0, LIMIT - 1).every((r) => r.status === 200)).toBe(true)
    // One count: the remaining figure goes down by one per request, whichever node answered.
    expect(allowed.map((r) => Number(r.remaining))).toEqual(Array.from({ length: LIMIT - 1 }, (_, i) => LIMIT - 2 - i))
    expect(new Set(allowed.map((r) => r.node))).toEqual(new Set(["A", "B"]))
    const refused = replies.slice(LIMIT - 1)
    for (const reply of refused) {
      expect(reply.status).toBe(429)
      expect(reply.limit).toBe(String(LIMIT))
      expect(Number(reply.retryAfter)).toBeGreaterThanOrEqual(1)
    }
    expect(new Set(refused.map((r) => r.node))).toEqual(new Set(["A", "B"]))
  }, 120_000)
})
