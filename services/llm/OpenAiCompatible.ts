/**
 * Any OpenAI-compatible chat-completions endpoint (vLLM, Ollama, llama.cpp
 * server, hosted APIs): `{base_url}/chat/completions`, streamed or whole.
 */
import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Either, Option, Redacted, Schema, Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { decodeBody, failure, makeHttpProvider } from "./HttpProvider.ts"
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

const stopOf = (reason: string | null | undefined): StopReason => (reason === "length" ? "length" : "stop")

/** What is read of a chat completion: fields a provider may leave out are optional, others ignored. */
const Usage = Schema.Struct({
  prompt_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  completion_tokens: Schema.optional(Schema.NullOr(Schema.Number))
})
const Text = Schema.optional(Schema.NullOr(Schema.String))
const FinishReason = Schema.optional(Schema.NullOr(Schema.String))
const Answer = Schema.Struct({
  choices: Schema.Array(Schema.Struct({ message: Schema.Struct({ content: Text }), finish_reason: FinishReason })),
  usage: Schema.optional(Schema.NullOr(Usage))
})
/** One streamed chunk: text deltas, the finish reason, usage in the last chunk, or an error. */
const Chunk = Schema.Struct({
  error: Schema.optional(Schema.Unknown),
  choices: Schema.optional(Schema.Array(Schema.Struct({ delta: Schema.optional(Schema.Struct({ content: Text })), finish_reason: FinishReason }))),
  usage: Schema.optional(Schema.NullOr(Usage))
})

const post = (spec: ModelSpec, payload: unknown) =>
  HttpClientRequest.post(`${spec.baseUrl}/chat/completions`).pipe(
    (r) => Option.match(spec.apiKey, { onNone: () => r, onSome: (key) => HttpClientRequest.bearerToken(r, Redacted.value(key)) }),
    HttpClientRequest.bodyJson(payload)
  )

const streamParts = (spec: ModelSpec, request: ChatRequest, response: HttpClientResponse.HttpClientResponse) => {
  let usage: { input_tokens: number; output_tokens: number } | undefined
  let stop: StopReason = "stop"
  let produced = ""
  const chunkOf = decodeBody(spec, Chunk, "a streamed chunk").text
  const parse = (data: string): Either.Either<Array<StreamPart>, UpstreamError> =>
    Either.flatMap(chunkOf(data), (chunk) => {
      if (chunk.error !== undefined && chunk.error !== null) {
        return Either.left(new UpstreamError({ message: `${spec.id}: ${JSON.stringify(chunk.error)}`, status: undefined, retryable: false }))
      }
      if (chunk.usage) usage = { input_tokens: chunk.usage.prompt_tokens ?? 0, output_tokens: chunk.usage.completion_tokens ?? 0 }
      const choice = chunk.choices?.[0]
      if (choice?.finish_reason) stop = stopOf(choice.finish_reason)
      const text = choice?.delta?.content
      if (typeof text !== "string" || text === "") return Either.right([])
      produced += text
      return Either.right([{ _tag: "Delta", text }])
    })
  const parts = sseEvents(response.stream).pipe(
    Stream.mapError(failure(spec)),
    Stream.takeWhile((event) => event.data !== "[DONE]"),
    Stream.mapConcatEffect((event) => parse(event.data))
  )
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
  completion: (spec, json, request) =>
    Either.map(decodeBody(spec, Answer, "a chat completion").value(json), (answer) => {
      const choice = answer.choices[0]
      const text = choice?.message.content ?? ""
      return {
        text,
        stopReason: stopOf(choice?.finish_reason),
        usage: {
          input_tokens: answer.usage?.prompt_tokens ?? estimateTokens(request.system),
          output_tokens: answer.usage?.completion_tokens ?? estimateTokens(text)
        }
      }
    }),
  parts: streamParts
})
