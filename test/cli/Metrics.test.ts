/**
 * `METRICS_PORT`: a real `engram serve` answers `GET /metrics` on a port of
 * its own, in the Prometheus text format, on both profiles: the queue gauge
 * rises with a queued batch and falls to zero as it is stored, the request
 * counter counts each request under its route's template, and the space's
 * wake shows in the wake histogram and the awake gauge.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { clusterDatabase, clusterSkipReason } from "../support/ClusterNodes.ts"
import { freePort, type Running, signupWithKey, startServer, TEST_WEBHOOK_KEY } from "../support/Process.ts"
import { parsePrometheus } from "../support/Prometheus.ts"

const profiles = [
  {
    name: "embedded",
    skip: undefined,
    setUp: async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "engram-metrics-"))
      return { env: { DATA_DIR: dataDir }, tearDown: async () => rmSync(dataDir, { recursive: true, force: true }) }
    }
  },
  {
    name: "server (PostgreSQL and Redis)",
    skip: clusterSkipReason,
    setUp: async () => {
      const database = await clusterDatabase()
      return {
        env: {
          DATABASE_URL: database.url,
          REDIS_URL: process.env.REDIS_URL!,
          WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
          RUNNER_HOST: "127.0.0.1",
          RUNNER_PORT: String(await freePort())
        },
        tearDown: database.drop
      }
    }
  }
] as const

/** A turn long enough that a batch of them takes the extraction a while. */
const turn = (i: number) =>
  `Item ${i}: Marta moved to Porto in March 2024 with her sister Ana, who teaches chemistry at the university there. ` +
  `On weekends they take the train to Braga for pottery classes, and Marta keeps a notebook of glazes that worked. ` +
  `She is allergic to peanuts and shellfish, so Ana cooks on Sundays; their neighbour Rui lends them his car in August.`

describe.each(profiles)("GET /metrics on METRICS_PORT ($name)", ({ setUp, skip }) => {
  let server: Running
  let metricsUrl = ""
  let tearDown = async () => {}

  beforeAll(async () => {
    if (skip !== undefined) return
    const profile = await setUp()
    tearDown = profile.tearDown
    const metricsPort = await freePort()
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
    server = await startServer({ ...profile.env, METRICS_PORT: String(metricsPort), CONSOLIDATION: "off" })
  }, 120_000)

  afterAll(async () => {
    if (skip !== undefined) return
    await server?.stop()
    await tearDown()
  }, 60_000)

  const scrape = async () => {
    const response = await fetch(metricsUrl)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/plain; version=0.0.4")
    return parsePrometheus(await response.text())
  }

  it.skipIf(skip !== undefined)("counts requests by route, follows a queued batch to zero, and shows the space's wake", async () => {
    // Before anything happened: the node's own series are there, at zero.
    const first = await scrape()
    expect(first.value("engram_spaces_awake")).toBe(0)
    expect(first.value("engram_space_wake_seconds_count")).toBe(0)
    expect(first.value("engram_queue_items", { state: "queued" })).toBe(0)
    expect(first.value("engram_queue_items", { state: "processing" })).toBe(0)
    expect(first.value("engram_drain_lag_seconds")).toBe(0)
    expect(first.types.get("engram_http_request_duration_seconds")).toBe("histogram")
    expect(first.value("process_resident_memory_bytes")).toBeGreaterThan(50_000_000)
    expect(first.value("nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0)
    // The API's own port does not serve them.
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404)

    const key = await signupWithKey(server.url, `metrics-${Date.now()}@example.test`)
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
    const spaceId = `metrics-${Date.now()}`
    const batches = 3
    for (let b = 0; b < batches; b++) {
      const response = await fetch(`${server.url}/v1/record/batch`, {
        method: "POST",
        headers,
        body: JSON.stringify({ space_id: spaceId, items: Array.from({ length: 100 }, (_, i) => ({ content: turn(b * 100 + i) })) })
      })
      expect(response.status).toBe(202)
    }

    // The queue as the scrapes see it: it rose with the batches and falls to zero once every item is stored.
    let highest = 0
    let processingSeen = 0
    let lagSeen = 0
    let last = await scrape()
    const deadline = Date.now() + 120_000
    for (;;) {
      const queued = last.value("engram_queue_items", { state: "queued" })!
      highest = Math.max(highest, queued)
      processingSeen = Math.max(processingSeen, last.value("engram_queue_items", { state: "processing" })!)
      lagSeen = Math.max(lagSeen, last.value("engram_drain_lag_seconds")!)
      if (queued === 0 && last.value("engram_queue_items", { state: "processing" }) === 0) break
      if (Date.now() > deadline) throw new Error(`the queue never drained: ${queued} items left`)
      await new Promise((r) => setTimeout(r, 50))
      last = await scrape()
    }
    expect(highest).toBeGreaterThan(0)
    expect(highest).toBeLessThanOrEqual(batches * 100)
    expect(processingSeen).toBeGreaterThan(0)
    expect(lagSeen).toBeGreaterThan(0)
    expect(last.value("engram_drain_lag_seconds")).toBe(0)
    const listed = await (await fetch(`${server.url}/v1/spaces/${spaceId}/memories?limit=1`, { headers })).json() as { total: number }
    expect(listed.total).toBeGreaterThanOrEqual(batches * 100)
    // Consolidation is off here: every stored fact waits for it.
    expect(last.value("engram_consolidation_pending_facts")).toBe(listed.total)

    // Two reads of a space and an unknown path: counted under their templates, never their concrete paths.
    await fetch(`${server.url}/v1/spaces/${spaceId}/memories?limit=1`, { headers })
    await fetch(`${server.url}/v1/no-such-route/${spaceId}`, { headers })
    const after = await scrape()
    expect(after.value("engram_http_requests_total", { method: "POST", route: "/v1/record/batch", status: "202" })).toBe(batches)
    expect(after.value("engram_http_requests_total", { method: "GET", route: "/v1/spaces/:space_id/memories", status: "200" })).toBe(2)
    // Unknown paths: this one and the API port's /metrics above.
    expect(after.value("engram_http_requests_total", { route: "unmatched", status: "404" })).toBe(2)
    expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes(spaceId)))).toBe(false)
    // The duration histogram: cumulative buckets ending at +Inf, which holds every request of the route.
    const buckets = after.samples.filter((s) => s.name === "engram_http_request_duration_seconds_bucket" && s.labels.route === "/v1/record/batch")
    expect(buckets.at(-1)?.labels.le).toBe("+Inf")
    expect(buckets.at(-1)?.value).toBe(batches)
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value)
    expect(after.value("engram_http_request_duration_seconds_count", { route: "/v1/record/batch" })).toBe(batches)

    // The space woke once, here, and is awake.
    expect(after.value("engram_space_wake_seconds_count")).toBe(1)
    expect(after.value("engram_space_wake_seconds_sum")).toBeGreaterThan(0)
    expect(after.value("engram_spaces_awake")).toBe(1)
  }, 180_000)
})
