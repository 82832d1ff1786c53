/** An OTLP/HTTP receiver for tests: it keeps every JSON body the exporter sends to /v1/traces. */
import { createServer } from "node:http"

export const collector = async () => {
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

/** Every span of the bodies received, each with its resource. */
export const spansOf = (bodies: ReadonlyArray<any>) =>
  bodies.flatMap((b) => b.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) => (ss.spans ?? []).map((s: any) => ({ ...s, resource: rs.resource })))
  )

/** A span's (or link's) attribute, as a string or a number. */
export const attribute = (span: any, key: string) => {
  const value = span.attributes?.find((a: any) => a.key === key)?.value
  return value === undefined ? undefined : value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.doubleValue)
}

