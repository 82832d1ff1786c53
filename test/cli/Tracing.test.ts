/** With OTEL_EXPORTER_OTLP_ENDPOINT set, every request leaves a server span at the collector. */
import { describe, expect, it } from "vitest"
import { attribute, collector, spansOf } from "../support/Collector.ts"
import { signupWithKey, startServer, withDataDir } from "../support/Process.ts"

describe("tracing", () => {
  it("exports a span per request, tagged with the service name and request id", async () => {
    const otlp = await collector()
    await withDataDir(async (dataDir) => {
      const server = await startServer({
        DATA_DIR: dataDir,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: "engram-trace-test"
      })
      try {
        const reply = await fetch(`${server.url}/v1/space-types`)
        expect(reply.status).toBe(200)
        const requestId = reply.headers.get("x-request-id")
        expect(await server.stop()).toBe(0) // shutdown flushes the batch
        const spans = spansOf(otlp.bodies)
        const requestSpan = spans.find((s: any) =>
          s.attributes?.some((a: any) => a.key === "request_id" && a.value?.stringValue === requestId)
        )
        expect(requestSpan, JSON.stringify(spans.map((s: any) => s.name))).toBeDefined()
        expect(requestSpan.name).toMatch(/GET/)
        expect(JSON.stringify(requestSpan.resource)).toContain("engram-trace-test")
      } finally {
        await server.stop()
        await otlp.close()
      }
    })
  }, 120_000)

  it("a queued batch: the drain steps that store it carry its job, organization, space and items, linked to the request's trace", async () => {
    const otlp = await collector()
    await withDataDir(async (dataDir) => {
      const server = await startServer({ DATA_DIR: dataDir, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, CONSOLIDATION: "off" })
      try {
        const key = await signupWithKey(server.url, "traced@example.test")
        const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
        const items = Array.from({ length: 100 }, (_, i) => ({ content: `Traced item ${i}: Ana keeps bees in Braga and sells honey on Saturdays.` }))
        const reply = await fetch(`${server.url}/v1/record/batch`, { method: "POST", headers, body: JSON.stringify({ space_id: "traced", items }) })
        expect(reply.status).toBe(202)
        const requestId = reply.headers.get("x-request-id")
        const { job_id: jobId } = await reply.json() as { job_id: string }
        let status = ""
        for (let i = 0; i < 600 && status !== "completed"; i++) {
          const job = await fetch(`${server.url}/v1/spaces/traced/jobs/${jobId}`, { headers })
          expect(job.status).toBe(200)
          status = (await job.json() as { status: string }).status
          if (status !== "completed") await new Promise((r) => setTimeout(r, 100))
        }
        expect(status).toBe("completed")
        expect(await server.stop()).toBe(0) // shutdown flushes the batch
        const spans = spansOf(otlp.bodies)
        const requestSpan = spans.find((s: any) => attribute(s, "request_id") === requestId)
        expect(requestSpan).toBeDefined()
        const stores = spans.filter((s: any) => s.name === "Space.storeQueued" && String(attribute(s, "job_id")).split(",").includes(jobId))
        expect(stores.length).toBeGreaterThanOrEqual(2) // groups of at most 50
        expect(stores.reduce((sum: number, s: any) => sum + attribute(s, "items"), 0)).toBe(items.length)
        const inRequestTrace = new Set(spans.filter((s: any) => s.traceId === requestSpan.traceId).map((s: any) => s.spanId))
        for (const store of stores) {
          expect(attribute(store, "space_id")).toBe("traced")
          expect(attribute(store, "org_id")).toMatch(/^org_/)
          // Linked to a span of the request's trace: the one that queued the job.
          const link = store.links?.find((l: any) => l.traceId === requestSpan.traceId)
          expect(link, JSON.stringify(store.links)).toBeDefined()
          expect(inRequestTrace.has(link.spanId)).toBe(true)
          expect(attribute(link, "job_id")).toBe(jobId)
          // Inside the drain loop's step, which names its loop and space.
          const step = spans.find((s: any) => s.spanId === store.parentSpanId)
          expect(step?.name).toBe("Space.drain")
          expect([attribute(step, "loop"), attribute(step, "space_id")]).toEqual(["drain", "traced"])
        }
      } finally {
        await server.stop()
        await otlp.close()
      }
    })
  }, 120_000)
})
