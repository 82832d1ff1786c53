/**
 * What the HTTP providers share: sending a request (any status but 2xx is an
 * UpstreamError with the provider's own message), and the complete / stream
 * shell around a provider's request body, whole answer and event stream.
 * Every body a provider sends is decoded with its protocol's Schema: a body
 * of another shape is an UpstreamError naming what did not match, never an
 * empty answer.
 */
import { HttpClient, type HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Effect, Either, ParseResult, Schema, type Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { type ChatRequest, type Completion, type Provider, retryableStatus, type StreamPart, UpstreamError } from "./Provider.ts"

export const failure = (spec: ModelSpec) => (cause: unknown) =>
  cause instanceof UpstreamError
    ? cause
    : new UpstreamError({ message: `${spec.id}: ${cause instanceof Error ? cause.message : String(cause)}`, status: undefined, retryable: true })

/**
 * One body of the provider's (a whole answer, or one streamed event's data)
 * read as JSON and decoded with `schema`: text that is no JSON, or JSON of
 * another shape, is an UpstreamError (not retried: the provider answered, in
 * a form it will answer again).
 */
export const decodeBody = <A, I>(spec: ModelSpec, schema: Schema.Schema<A, I>, what: string) => {
  const decode = Schema.decodeUnknownEither(Schema.parseJson(schema))
  const decodeValue = Schema.decodeUnknownEither(schema)
  const refuse = (error: ParseResult.ParseError) =>
    new UpstreamError({
      message: `${spec.id} answered ${what} Engram cannot read: ${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 500)}`,
      status: undefined,
      retryable: false
    })
  return {
    text: (text: string): Either.Either<A, UpstreamError> => Either.mapLeft(decode(text), refuse),
    value: (value: unknown): Either.Either<A, UpstreamError> => Either.mapLeft(decodeValue(value), refuse)
  }
}

const send = (spec: ModelSpec, request: HttpClientRequest.HttpClientRequest) =>
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

export interface WireProtocol {
  /** The provider's request for this call, whole or streamed. */
  readonly request: (spec: ModelSpec, request: ChatRequest, stream: boolean) => Effect.Effect<HttpClientRequest.HttpClientRequest, unknown>
  /** A whole answer's body (parsed JSON, not yet decoded) as a completion, or why it is not one. */
  readonly completion: (spec: ModelSpec, json: unknown, request: ChatRequest) => Either.Either<Completion, UpstreamError>
  readonly parts: (
    spec: ModelSpec,
    request: ChatRequest,
    response: HttpClientResponse.HttpClientResponse
  ) => Stream.Stream<StreamPart, UpstreamError>
}

export const makeHttpProvider = (protocol: WireProtocol) =>
  Effect.map(HttpClient.HttpClient, (client): Provider => {
    const call = (spec: ModelSpec, request: ChatRequest, stream: boolean) =>
      protocol.request(spec, request, stream).pipe(
        Effect.mapError(failure(spec)),
        Effect.flatMap((http) => send(spec, http)),
        Effect.provideService(HttpClient.HttpClient, client)
      )
    return {
      complete: (spec, request) =>
        call(spec, request, false).pipe(
          Effect.flatMap((response) => Effect.mapError(response.json, failure(spec))),
          Effect.flatMap((json) => protocol.completion(spec, json, request))
        ),
      stream: (spec, request) =>
        call(spec, request, true).pipe(Effect.map((response) => protocol.parts(spec, request, response)))
    }
  })
