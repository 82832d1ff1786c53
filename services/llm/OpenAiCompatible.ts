/**
 * Any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp
 * server, hosted APIs): `{base_url}/chat/completions`, streamed or whole.
 */
import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Effect, Option, Redacted, Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { failure, makeHttpProvider } from "./HttpProvider.ts"
import { type ChatRequest, estimateTokens, type StopReason, type StreamPart, UpstreamError } from "./Provider.ts"
import { sseEvents } from "./Sse.ts"

const body = (spec: ModelSpec, request: ChatRequest, stream: boolean) => ({
  ...request.extra,
  model: spec.upstreamModel,
  messages: [
    ...(request.system === "" ? [] : [{ role: "system", content: request.system }]),
    ...request.messages.map((m) => ({ role: m.role, content: m.content }))
  ],
  ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
  ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
  stream,
  ...(stream ? { stream_options: { include_usage: true } } : {})
})

const stopOf = (reason: unknown): StopReason => (reason === "length" ? "length" : "stop")

const post = (spec: ModelSpec, payload: unknown) =>
  HttpClientRequest.post(`${spec.baseUrl}/chat/completions`).pipe(
    (r) => Option.match(spec.apiKey, { onNone: () => r, onSome: (key) => HttpClientRequest.bearerToken(r, Redacted.value(key)) }),
    HttpClientRequest.bodyJson(payload)
  )

const streamParts = (spec: ModelSpec, request: ChatRequest, response: HttpClientResponse.HttpClientResponse) => {
  let usage: { input_tokens: number; output_tokens: number } | undefined
  let stop: StopReason = "stop"
  let produced = ""
  const parts = sseEvents(response.stream).pipe(
    Stream.takeWhile((event) => event.data !== "[DONE]"),
    Stream.mapConcatEffect((event) => Effect.try({ try: () => parse(event.data), catch: failure(spec) }))
  )
  const parse = (data: string): Array<StreamPart> => {
    const chunk = JSON.parse(data) as any
    if (chunk?.error) throw new UpstreamError({ message: `${spec.id}: ${JSON.stringify(chunk.error)}`, status: undefined, retryable: false })
    if (chunk?.usage) usage = { input_tokens: chunk.usage.prompt_tokens ?? 0, output_tokens: chunk.usage.completion_tokens ?? 0 }
    const choice = chunk?.choices?.[0]
    if (choice?.finish_reason) stop = stopOf(choice.finish_reason)
    const text = choice?.delta?.content
    if (typeof text !== "string" || text === "") return []
    produced += text
    return [{ _tag: "Delta", text }]
  }
  const done = Stream.sync((): StreamPart => ({
    _tag: "Done",
    stopReason: stop,
    usage: usage ?? {
      input_tokens: estimateTokens(request.system + request.messages.map((m) => m.content).join("\n")),
      output_tokens: estimateTokens(produced)
    }
  }))
  return Stream.concat(parts, done).pipe(Stream.mapError(failure(spec)))
}

export const make = makeHttpProvider({
  request: (spec, request, stream) => post(spec, body(spec, request, stream)),
  completion: (json, request) => {
    const choice = json?.choices?.[0]
    const text = typeof choice?.message?.content === "string" ? choice.message.content : ""
    return {
      text,
      stopReason: stopOf(choice?.finish_reason),
      usage: {
        input_tokens: json?.usage?.prompt_tokens ?? estimateTokens(request.system),
        output_tokens: json?.usage?.completion_tokens ?? estimateTokens(text)
      }
    }
  },
  parts: streamParts
})
