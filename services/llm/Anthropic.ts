/** Anthropic's messages API: `{base_url}/messages` with `x-api-key`, streamed or whole. */
import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Effect, Option, Redacted, Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { failure, makeHttpProvider } from "./HttpProvider.ts"
import { type ChatRequest, estimateTokens, type StopReason, type StreamPart, UpstreamError } from "./Provider.ts"
import { sseEvents } from "./Sse.ts"

const ANTHROPIC_VERSION = "2023-06-01"

const body = (spec: ModelSpec, request: ChatRequest, stream: boolean) => ({
  ...request.extra,
  model: spec.upstreamModel,
  ...(request.system === "" ? {} : { system: request.system }),
  messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
  max_tokens: request.maxTokens ?? 1024,
  ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  stream
})

const stopOf = (reason: unknown): StopReason => (reason === "max_tokens" ? "length" : "stop")

const post = (spec: ModelSpec, payload: unknown) =>
  HttpClientRequest.post(`${spec.baseUrl}/messages`).pipe(
    HttpClientRequest.setHeader("anthropic-version", ANTHROPIC_VERSION),
    (r) => Option.match(spec.apiKey, { onNone: () => r, onSome: (key) => HttpClientRequest.setHeader(r, "x-api-key", Redacted.value(key)) }),
    HttpClientRequest.bodyJson(payload)
  )

const streamParts = (spec: ModelSpec, request: ChatRequest, response: HttpClientResponse.HttpClientResponse) => {
  let input = estimateTokens(request.system + request.messages.map((m) => m.content).join("\n"))
  let output: number | undefined
  let stop: StopReason = "stop"
  let produced = ""
  const parse = (data: string): Array<StreamPart> => {
    const event = JSON.parse(data) as any
    switch (event?.type) {
      case "error":
        throw new UpstreamError({ message: `${spec.id}: ${JSON.stringify(event.error)}`, status: undefined, retryable: false })
      case "message_start":
        input = event.message?.usage?.input_tokens ?? input
        return []
      case "content_block_delta":
        if (event.delta?.type !== "text_delta" || typeof event.delta.text !== "string") return []
        produced += event.delta.text
        return [{ _tag: "Delta", text: event.delta.text }]
      case "message_delta":
        if (event.delta?.stop_reason) stop = stopOf(event.delta.stop_reason)
        output = event.usage?.output_tokens ?? output
        return []
      default:
        return []
    }
  }
  const parts = sseEvents(response.stream).pipe(
    Stream.mapConcatEffect((event) => Effect.try({ try: () => parse(event.data), catch: failure(spec) }))
  )
  const done = Stream.sync((): StreamPart => ({
    _tag: "Done",
    stopReason: stop,
    usage: { input_tokens: input, output_tokens: output ?? estimateTokens(produced) }
  }))
  return Stream.concat(parts, done).pipe(Stream.mapError(failure(spec)))
}

export const make = makeHttpProvider({
  request: (spec, request, stream) => post(spec, body(spec, request, stream)),
  completion: (json, request) => {
    const text = Array.isArray(json?.content)
      ? json.content.filter((b: any) => b?.type === "text").map((b: any) => String(b.text)).join("")
      : ""
    return {
      text,
      stopReason: stopOf(json?.stop_reason),
      usage: {
        input_tokens: json?.usage?.input_tokens ?? estimateTokens(request.system),
        output_tokens: json?.usage?.output_tokens ?? estimateTokens(text)
      }
    }
  },
  parts: streamParts
})
