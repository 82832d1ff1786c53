/**
 * A stand-in OpenAI-compatible upstream (the hosted model is the one boundary
 * the tests cannot reach): `/v1/chat/completions`, whole or streamed, that
 * records every body it is sent. The last user message steers it:
 * `FAIL 503` / `FAIL 429` answer that status, `FLAKY <word>` answers 503 the
 * first time it sees that word, `SLOW` streams one word every 100 ms,
 * `MALFORMED` answers 200 with a body of the wrong shape (whole: no list of
 * choices or content blocks; streamed: a first word, then a chunk or event
 * whose text is a number); anything else is echoed back as `echo: <message>`.
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
  const flaky = new Set<string>()
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (chunk) => (raw += chunk))
    req.on("end", async () => {
      const body = JSON.parse(raw || "{}")
      bodies.push(body)
      const said = lastUser(body)
      const failure = /FAIL (\d{3})/.exec(said)
      const once = /FLAKY (\w+)/.exec(said)
      if (once && !flaky.has(once[1]!)) {
        flaky.add(once[1]!)
        res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "try again" } }))
        return
      }
      if (failure) {
        res.writeHead(Number(failure[1]), { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "stand-in failure" } }))
        return
      }
      const words = `echo: ${said}`.split(" ").map((w, i) => (i === 0 ? w : ` ${w}`))
      if (said.includes("MALFORMED")) return malformedAnswer(req.url?.endsWith("/messages") === true, body, res)
      if (req.url?.endsWith("/messages")) return anthropicAnswer(req.headers, body, words, res)
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
    }, {
      id: "upstream/tight-1",
      provider: "openai",
      base_url: upstream.url,
      short_name: "tight",
      credits_per_1k_input: 5,
      credits_per_1k_output: 5,
      requests_per_minute: 2,
      aliases: [],
      timeout_seconds: 10,
      max_retries: 0
    }, {
      id: "upstream/claude-echo-1",
      provider: "anthropic",
      base_url: upstream.url,
      api_key_env: "STAND_IN_ANTHROPIC_KEY",
      short_name: "claude-echo",
      credits_per_1k_input: 8,
      credits_per_1k_output: 8,
      requests_per_minute: 1000,
      aliases: [],
      timeout_seconds: 10,
      max_retries: 0
    }]
  }, { STAND_IN_ANTHROPIC_KEY: "sk-ant-test" })

/** The same echo in Anthropic's messages shape, whole or as its event stream; checks the key and version headers. */
const anthropicAnswer = (headers: Record<string, unknown>, body: any, words: Array<string>, res: import("node:http").ServerResponse) => {
  if (headers["x-api-key"] !== "sk-ant-test" || headers["anthropic-version"] === undefined) {
    res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "authentication_error" } }))
    return
  }
  const text = words.join("")
  const usage = { input_tokens: 13, output_tokens: words.length }
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "msg_up", type: "message", role: "assistant", model: body.model,
      content: [{ type: "text", text }], stop_reason: "end_turn", stop_sequence: null, usage
    }))
    return
  }
  res.writeHead(200, { "content-type": "text/event-stream" })
  const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  send("message_start", { message: { id: "msg_up", type: "message", role: "assistant", content: [], model: body.model, usage: { input_tokens: 13, output_tokens: 0 } } })
  send("content_block_start", { index: 0, content_block: { type: "text", text: "" } })
  for (const word of words) send("content_block_delta", { index: 0, delta: { type: "text_delta", text: word } })
  send("content_block_stop", { index: 0 })
  send("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: words.length } })
  send("message_stop", {})
  res.end()
}

/** A 200 whose body is of the wrong shape, in either wire format: what a misbehaving endpoint or proxy might send. */
const malformedAnswer = (anthropic: boolean, body: any, res: import("node:http").ServerResponse) => {
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(
      anthropic ? { id: "msg_up", type: "message", content: "not a list of blocks" } : { id: "up-1", object: "chat.completion", choices: "none" }
    ))
    return
  }
  res.writeHead(200, { "content-type": "text/event-stream" })
  if (anthropic) {
    const send = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
    send("message_start", { message: { id: "msg_up", usage: { input_tokens: 13, output_tokens: 0 } } })
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: "first" } })
    send("content_block_delta", { index: 0, delta: { type: "text_delta", text: 42 } })
    send("message_stop", {})
    res.end()
    return
  }
  res.write(`data: ${JSON.stringify({ id: "up-1", choices: [{ index: 0, delta: { content: "first" }, finish_reason: null }] })}\n\n`)
  res.write(`data: ${JSON.stringify({ id: "up-1", choices: [{ index: 0, delta: { content: 42 }, finish_reason: null }] })}\n\n`)
  res.end("data: [DONE]\n\n")
}
