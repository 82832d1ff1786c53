/**
 * Any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp
 * server, hosted APIs): `{base_url}/chat/completions`, streamed or whole.
 */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Effect, Option, Redacted, Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { type ChatRequest, estimateTokens, type Provider, retryableStatus, type StopReason, type StreamPart, UpstreamError } from "./Provider.ts"
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

export const failure = (spec: ModelSpec) => (cause: unknown) =>
  cause instanceof UpstreamError
    ? cause
    : new UpstreamError({ message: `${spec.id}: ${String((cause as Error)?.message ?? cause)}`, status: undefined, retryable: true })

/** Sends the request; any status but 2xx is an UpstreamError carrying the provider's own message. */
export const send = (spec: ModelSpec, request: HttpClientRequest.HttpClientRequest) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(request)
    if (response.status >= 200 && response.status < 300) return response
    const text = yield* response.text.pipe(Effect.orElseSucceed(() => ""))
    return yield* new UpstreamError({
      message: `${spec.id} answered ${response.status}: ${text.slice(0, 500)}`,
      status: response.status,
      retryable: retryableStatus(response.status)
    })
  }).pipe(Effect.mapError(failure(spec)))

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

export const make = Effect.map(HttpClient.HttpClient, (client): Provider => {
  const provide = Effect.provideService(HttpClient.HttpClient, client)
  return {
    complete: (spec, request) =>
      Effect.gen(function*() {
        const response = yield* send(spec, yield* post(spec, body(spec, request, false)).pipe(Effect.mapError(failure(spec))))
        const json = (yield* response.json.pipe(Effect.mapError(failure(spec)))) as any
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
      }).pipe(provide),
    stream: (spec, request) =>
      Effect.gen(function*() {
        const response = yield* send(spec, yield* post(spec, body(spec, request, true)).pipe(Effect.mapError(failure(spec))))
        return streamParts(spec, request, response)
      }).pipe(provide)
  }
})
