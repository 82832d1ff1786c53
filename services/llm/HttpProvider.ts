/**
 * What the HTTP providers share: sending a request (any status but 2xx is an
 * UpstreamError with the provider's own message), and the complete / stream
 * shell around a provider's request body, whole answer and event stream.
 */
import { HttpClient, type HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Effect, type Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"
import { type ChatRequest, type Completion, type Provider, retryableStatus, type StreamPart, UpstreamError } from "./Provider.ts"

export const failure = (spec: ModelSpec) => (cause: unknown) =>
  cause instanceof UpstreamError
    ? cause
    : new UpstreamError({ message: `${spec.id}: ${String((cause as Error)?.message ?? cause)}`, status: undefined, retryable: true })

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
  /** A whole answer's body as a completion. */
  readonly completion: (json: any, request: ChatRequest) => Completion
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
          Effect.map((json) => protocol.completion(json, request))
        ),
      stream: (spec, request) =>
        call(spec, request, true).pipe(Effect.map((response) => protocol.parts(spec, request, response)))
    }
  })
