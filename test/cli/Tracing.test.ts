/** With OTEL_EXPORTER_OTLP_ENDPOINT set, every request leaves a server span at the collector. */
import { describe, expect, it } from "vitest"
import { createServer } from "node:http"
import { startServer, withDataDir } from "../support/Process.ts"

const collector = async () => {
  const bodies: Array<any> = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (d) => (body += d))
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        try {
          bodies.push(JSON.parse(body))
        } catch {
          bodies.push({ unparsed: body.length })
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address() as { port: number }
  return { url: `http://127.0.0.1:${address.port}`, bodies, close: () => new Promise((r) => server.close(r)) }
}

const spansOf = (bodies: ReadonlyArray<any>) =>
  bodies.flatMap((b) => b.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) => (ss.spans ?? []).map((s: any) => ({ ...s, resource: rs.resource })))
  )

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
})
