/**
 * A stand-in OpenAI-compatible upstream (the hosted model is the one boundary
 * the tests cannot reach): `/v1/chat/completions`, whole or streamed, that
 * records every body it is sent. The last user message steers it:
 * `FAIL 503` / `FAIL 429` answer that status, `SLOW` streams one word every
 * 100 ms; anything else is echoed back as `echo: <message>`.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as Catalogs from "../../services/llm/Catalog.ts"

export interface Upstream {
  readonly url: string
  readonly bodies: Array<any>
  readonly close: () => Promise<void>
}

const lastUser = (body: any): string =>
  [...(body.messages ?? [])].reverse().find((m: any) => m.role === "user")?.content ?? ""

export const startUpstream = async (): Promise<Upstream> => {
  const bodies: Array<any> = []
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (chunk) => (raw += chunk))
    req.on("end", async () => {
      const body = JSON.parse(raw || "{}")
      bodies.push(body)
      const said = lastUser(body)
      const failure = /FAIL (\d{3})/.exec(said)
      if (failure) {
        res.writeHead(Number(failure[1]), { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "stand-in failure" } }))
        return
      }
      const words = `echo: ${said}`.split(" ").map((w, i) => (i === 0 ? w : ` ${w}`))
      const usage = { prompt_tokens: 11, completion_tokens: words.length, total_tokens: 11 + words.length }
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
          id: "up-1",
          object: "chat.completion",
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: words.join("") }, finish_reason: "stop" }],
          usage
        }))
        return
      }
      res.writeHead(200, { "content-type": "text/event-stream" })
      const slow = said.includes("SLOW")
      for (const word of words) {
        if (res.destroyed) return
        res.write(`data: ${JSON.stringify({ id: "up-1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: word }, finish_reason: null }] })}\n\n`)
        if (slow) await new Promise((r) => setTimeout(r, 100))
      }
      res.write(`data: ${JSON.stringify({ id: "up-1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`)
      res.write(`data: ${JSON.stringify({ id: "up-1", choices: [], usage })}\n\n`)
      res.end("data: [DONE]\n\n")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

/** A catalog serving the stand-in as `echo` (upstream/echo-1) beside the local engine, which stays the default. */
export const upstreamCatalog = (upstream: Upstream) =>
  Catalogs.layerStatic({
    models: [{
      id: "upstream/echo-1",
      provider: "openai",
      base_url: upstream.url,
      upstream_model: "echo-1",
      short_name: "echo",
      credits_per_1k_input: 1,
      credits_per_1k_output: 2,
      requests_per_minute: 1000,
      aliases: ["fast"],
      timeout_seconds: 10,
      max_retries: 1
    }]
  })
