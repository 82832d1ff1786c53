/** Anthropic's messages API: `{base_url}/messages` with `x-api-key`, streamed or whole. */
import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Either, Option, Redacted, Schema, Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { decodeBody, failure, makeHttpProvider } from "./HttpProvider.ts"
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

const stopOf = (reason: string | null | undefined): StopReason => (reason === "max_tokens" ? "length" : "stop")

/** What is read of a message: fields a provider may leave out are optional, others ignored. */
const Usage = Schema.Struct({
  input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  output_tokens: Schema.optional(Schema.NullOr(Schema.Number))
})
const StopReasonField = Schema.optional(Schema.NullOr(Schema.String))
const Answer = Schema.Struct({
  content: Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })),
  stop_reason: StopReasonField,
  usage: Schema.optional(Schema.NullOr(Usage))
})
/** The streamed events read (Anthropic's documented types), told apart by `type`. */
const StreamEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("error"), error: Schema.Unknown }),
  Schema.Struct({ type: Schema.Literal("message_start"), message: Schema.Struct({ usage: Schema.optional(Schema.NullOr(Usage)) }) }),
  Schema.Struct({
    type: Schema.Literal("content_block_delta"),
    delta: Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })
  }),
  Schema.Struct({
    type: Schema.Literal("message_delta"),
    delta: Schema.Struct({ stop_reason: StopReasonField }),
    usage: Schema.optional(Schema.NullOr(Usage))
  })
)
const READ_TYPES: ReadonlySet<string> = new Set(["error", "message_start", "content_block_delta", "message_delta"])
/** Any event only has to be an object with a `type`; the others (ping, content_block_start, message_stop, later types) are passed over. */
const AnyEvent = Schema.Struct({ type: Schema.String })

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
  // Each event's JSON is parsed once; its type, then (for the types read) the event, decoded from that value.
  const jsonOf = decodeBody(spec, Schema.Unknown, "a streamed event").text
  const typeOf = decodeBody(spec, AnyEvent, "a streamed event").value
  const eventOf = decodeBody(spec, StreamEvent, "a streamed event").value
  const parse = (data: string): Either.Either<Array<StreamPart>, UpstreamError> =>
    Either.gen(function*() {
      const json = yield* jsonOf(data)
      const { type } = yield* typeOf(json)
      if (!READ_TYPES.has(type)) return []
      const event = yield* eventOf(json)
      switch (event.type) {
        case "error":
          return yield* Either.left(new UpstreamError({ message: `${spec.id}: ${JSON.stringify(event.error)}`, status: undefined, retryable: false }))
        case "message_start":
          input = event.message.usage?.input_tokens ?? input
          return []
        case "content_block_delta":
          if (event.delta.type !== "text_delta" || event.delta.text === undefined) return []
          produced += event.delta.text
          return [{ _tag: "Delta", text: event.delta.text }]
        case "message_delta":
          if (event.delta.stop_reason) stop = stopOf(event.delta.stop_reason)
          output = event.usage?.output_tokens ?? output
          return []
      }
    })
  const parts = sseEvents(response.stream).pipe(Stream.mapError(failure(spec)), Stream.mapConcatEffect((event) => parse(event.data)))
  const done = Stream.sync((): StreamPart => ({
    _tag: "Done",
    stopReason: stop,
    usage: { input_tokens: input, output_tokens: output ?? estimateTokens(produced) }
  }))
  return Stream.concat(parts, done).pipe(Stream.mapError(failure(spec)))
}

export const make = makeHttpProvider({
  request: (spec, request, stream) => post(spec, body(spec, request, stream)),
  completion: (spec, json, request) =>
    Either.map(decodeBody(spec, Answer, "a message").value(json), (answer) => {
      const text = answer.content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("")
      return {
        text,
        stopReason: stopOf(answer.stop_reason),
        usage: {
          input_tokens: answer.usage?.input_tokens ?? estimateTokens(request.system),
          output_tokens: answer.usage?.output_tokens ?? estimateTokens(text)
        }
      }
    }),
  parts: streamParts
})
