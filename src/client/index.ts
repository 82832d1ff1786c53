/**
 * `engram/client`: Engram's HTTP API as typed clients, derived from the same
 * HttpApi definition the server serves (src/domain/Api.ts), so a contract
 * change that breaks a client breaks the build.
 *
 * - For Effect programs: `EngramClient`, a service whose value is the
 *   `HttpApiClient` of the whole contract (`client.memories.record(...)`),
 *   failing with the documented errors as tagged values
 *   (`ValidationError`, `NotFound`, ... each with `code` and `message`).
 * - For plain TypeScript: `createClient({ baseUrl, apiKey })`, Promise methods
 *   named after the operations; a refusal rejects with an `EngramError`
 *   carrying the HTTP `status` and the documented `code`.
 */
import { FetchHttpClient, HttpApiClient, HttpApiSchema, HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Cause, Clock, Context, Duration, Effect, Exit, FiberRef, Layer, ManagedRuntime, Option, ParseResult, Schema } from "effect"
import { fromDecodeIssues } from "../http/ErrorEnvelope.ts"
import { EngramApi } from "../domain/Api.ts"
import * as Errors from "../domain/Errors.ts"
import { BatchRequest, MemoryListQuery, PatchMemoryRequest, RecordRequest, RetrieveRequest, SearchRequest } from "../domain/Memories.ts"
import { ReasonRequest } from "../domain/Reason.ts"
import { CreateSpaceRequest } from "../domain/Spaces.ts"
import { SpaceListQuery } from "../domain/SpacesApi.ts"

export { EngramApi }
/** The contract on the wire, for plain `fetch` callers: `WireBody<"POST", "/v1/retrieve">`, `WireAnswer<...>`. */
export type { RouteOf, WireAnswer, WireBody, WireMethod, WireRoutes } from "./Wire.ts"
export * as Errors from "../domain/Errors.ts"

/** What a client needs: where Engram listens, and a key (or a session token) to send as the bearer. */
export interface ClientOptions {
  readonly baseUrl: string
  readonly apiKey?: string | undefined
}

/** Every documented error, by its wire code: its tag and its HTTP status. */
const documented: ReadonlyMap<string, { readonly tag: string; readonly status: number }> = new Map(
  Object.values(Errors).flatMap((value) => {
    if (typeof value !== "function" || !Schema.isSchema(value)) return []
    const probe = tryConstruct(value)
    if (probe === undefined) return []
    return [[probe.code, { tag: probe.tag, status: HttpApiSchema.getStatusErrorAST(value.ast) }]]
  })
)

function tryConstruct(value: Function): { readonly code: string; readonly tag: string } | undefined {
  try {
    const made: unknown = Reflect.construct(value, [{ message: "" }])
    if (typeof made !== "object" || made === null) return undefined
    const code = Reflect.get(made, "code")
    const tag = Reflect.get(made, "_tag")
    return typeof code === "string" && typeof tag === "string" ? { code, tag } : undefined
  } catch {
    return undefined
  }
}

const Envelope = Schema.parseJson(Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, request_id: Schema.optional(Schema.String) })
}))
const decodeEnvelope = Schema.decodeUnknownOption(Envelope)

/** What the last refusal a fiber met said, request id included (the tagged errors carry only code and message). */
const lastRefusal = FiberRef.unsafeMake<EngramError | undefined>(undefined)

/**
 * Engram answers a refusal with `{"error":{"code","message","request_id"}}`;
 * the HttpApi client decodes errors by their tag. Each refusal's body is
 * rewritten to the tagged shape of its documented error before it is decoded.
 */
const taggedRefusals = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transformResponse(client, (effect) =>
    Effect.flatMap(effect, (response) => {
      if (response.status < 400) return Effect.succeed(response)
      return Effect.flatMap(Effect.orElseSucceed(response.text, () => ""), (text) => {
        const envelope = decodeEnvelope(text)
        const headers = new Headers(Object.entries(response.headers))
        if (Option.isNone(envelope)) {
          return Effect.as(
            FiberRef.set(lastRefusal, new EngramError({ status: response.status, code: "unexpected_response", message: text.slice(0, 500) })),
            HttpClientResponse.fromWeb(response.request, new Response(text, { status: response.status, headers }))
          )
        }
        const { code, message, request_id } = envelope.value.error
        const tag = documented.get(code)?.tag ?? "EngramError"
        return Effect.as(
          FiberRef.set(lastRefusal, new EngramError({ status: response.status, code, message, requestId: request_id })),
          HttpClientResponse.fromWeb(response.request, new Response(JSON.stringify({ _tag: tag, code, message }), { status: response.status, headers }))
        )
      })
    }))

/** The typed client of the whole contract (every group and operation of `EngramApi`). */
export const makeEffectClient = (options: ClientOptions) =>
  HttpApiClient.make(EngramApi, {
    baseUrl: options.baseUrl,
    transformClient: (client) => {
      const tagged = taggedRefusals(client)
      const key = options.apiKey
      return key === undefined ? tagged : HttpClient.mapRequest(tagged, HttpClientRequest.bearerToken(key))
    }
  })

export type EngramHttpClient = Effect.Effect.Success<ReturnType<typeof makeEffectClient>>

/** The typed client as a service: `EngramClient.layer({ baseUrl, apiKey })`, needing an `HttpClient` (`FetchHttpClient.layer`). */
export class EngramClient extends Context.Tag("engram/client/EngramClient")<EngramClient, EngramHttpClient>() {
  static readonly layer = (options: ClientOptions): Layer.Layer<EngramClient, never, HttpClient.HttpClient> =>
    Layer.effect(EngramClient, makeEffectClient(options))
}

/** A refusal as a plain value: the HTTP status, the documented code, the message and the request's id. */
export class EngramError extends Error {
  readonly status: number
  readonly code: string
  readonly requestId: string | undefined
  constructor(options: { readonly status: number; readonly code: string; readonly message: string; readonly requestId?: string | undefined }) {
    super(options.message)
    this.name = "EngramError"
    this.status = options.status
    this.code = options.code
    this.requestId = options.requestId
  }
}

const isDocumented = (error: unknown): error is { readonly code: string; readonly message: string } =>
  typeof error === "object" && error !== null && typeof Reflect.get(error, "code") === "string" &&
  typeof Reflect.get(error, "message") === "string" && documented.has(String(Reflect.get(error, "code")))

/** Any failure of a call as an `EngramError` (a transport failure is status 0, code `client_error`). */
const toEngramError = (error: unknown): EngramError => {
  if (error instanceof EngramError) return error
  if (HttpClientError.isHttpClientError(error) && error._tag === "ResponseError") {
    return new EngramError({ status: error.response.status, code: "unexpected_response", message: error.message })
  }
  if (isDocumented(error)) return new EngramError({ status: documented.get(error.code)!.status, code: error.code, message: error.message })
  if (ParseResult.isParseError(error)) return new EngramError({ status: 0, code: "unexpected_response", message: error.message })
  return new EngramError({ status: 0, code: "client_error", message: error instanceof Error ? error.message : String(error) })
}

type Input<S extends Schema.Schema.AnyNoContext> = Schema.Schema.Encoded<S>

/** A query as a caller writes it: every field optional (the defaults fill in), numbers as numbers, lists as arrays. */
type Query<S extends Schema.Schema.AnyNoContext> = { readonly [K in keyof Schema.Schema.Type<S>]?: Schema.Schema.Type<S>[K] }

/** A query's values as they travel in a URL: numbers and booleans as text, lists joined by commas. */
const asUrlParams = (query: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(query).flatMap(([key, value]) =>
    value === undefined ? [] : [[key, Array.isArray(value) ? value.join(",") : typeof value === "number" || typeof value === "boolean" ? String(value) : value]]))

/** A queued job's states that are final. */
const FINISHED = new Set(["completed", "failed", "cancelled"])

/**
 * The Promise client. Each method is one operation of the contract, taking
 * the documented request body (defaults filled in as the server fills them)
 * and resolving to the documented answer. `waitForJob` polls a queued write
 * until it has finished; `chatCompletions`, `responses` and `messages` call
 * the proxy with the wire format of each. `effect` runs anything else of the
 * typed client.
 */
export const createClient = (options: ClientOptions & { readonly fetch?: typeof globalThis.fetch | undefined }) => {
  const http = options.fetch === undefined
    ? FetchHttpClient.layer
    : FetchHttpClient.layer.pipe(Layer.provide(Layer.succeed(FetchHttpClient.Fetch, options.fetch)))
  const runtime = ManagedRuntime.make(Layer.provideMerge(EngramClient.layer(options), http))

  const effect = <A, E>(use: (client: EngramHttpClient) => Effect.Effect<A, E, HttpClient.HttpClient | EngramClient>): Promise<A> =>
    runtime.runPromiseExit(Effect.flatMap(EngramClient, use).pipe(
      // A refusal the server answered is reported as it said it, with its request id.
      Effect.catchAllCause((cause): Effect.Effect<never, E | EngramError> =>
        Effect.flatMap(FiberRef.get(lastRefusal), (refusal): Effect.Effect<never, E | EngramError> =>
          refusal !== undefined && !Cause.isInterruptedOnly(cause) ? Effect.fail(refusal) : Effect.failCause(cause)))
    )).then(Exit.match({
      onSuccess: (value) => value,
      onFailure: (cause) => {
        throw toEngramError(Option.getOrElse(Cause.failureOption(cause), () => Cause.squash(cause)))
      }
    }))

  /** Fills in a request's defaults the way the server does (and refuses what it would refuse) before sending. */
  const decoded = <S extends Schema.Schema.AnyNoContext>(schema: S, input: unknown) =>
    Effect.mapError(Schema.decodeUnknown(schema)(input), (error) => new EngramError(fromDecodeIssues(ParseResult.ArrayFormatter.formatErrorSync(error))))

  const proxy = (path: string) => (body: unknown, headers: Readonly<Record<string, string>> = {}): Promise<unknown> =>
    effect(() =>
      Effect.gen(function*() {
        const client = (yield* HttpClient.HttpClient).pipe(taggedRefusals, HttpClient.filterStatusOk)
        const request = HttpClientRequest.post(new URL(path, options.baseUrl).toString()).pipe(
          HttpClientRequest.setHeaders(headers),
          options.apiKey === undefined ? (r) => r : HttpClientRequest.bearerToken(options.apiKey),
          HttpClientRequest.bodyUnsafeJson(body)
        )
        const response = yield* client.execute(request)
        return yield* response.json
      }))

  const getJob = (spaceId: string, jobId: string) => effect((c) => c.memories.job({ path: { space_id: spaceId, job_id: jobId } }))

  return {
    /** POST /v1/record: stores one item now (or queues it with `async: true`). */
    record: (request: Input<typeof RecordRequest>) => effect((c) => Effect.flatMap(decoded(RecordRequest, request), (payload) => c.memories.record({ payload }))),
    /** POST /v1/record/batch: queues up to 100 items; resolves to the job to poll. */
    recordBatch: (request: Input<typeof BatchRequest>) => effect((c) => Effect.flatMap(decoded(BatchRequest, request), (payload) => c.memories.batch({ payload }))),
    /** POST /v1/retrieve: the memories that answer a query. */
    retrieve: (request: Input<typeof RetrieveRequest>) => effect((c) => Effect.flatMap(decoded(RetrieveRequest, request), (payload) => c.memories.retrieve({ payload }))),
    /** POST /v1/search. */
    search: (request: Input<typeof SearchRequest>) => effect((c) => Effect.flatMap(decoded(SearchRequest, request), (payload) => c.memories.search({ payload }))),
    /** GET /v1/spaces/{space_id}/memories, a page at a time. */
    listMemories: (spaceId: string, query: Query<typeof MemoryListQuery> = {}) =>
      effect((c) => Effect.flatMap(decoded(MemoryListQuery, asUrlParams(query)), (urlParams) => c.memories.list({ path: { space_id: spaceId }, urlParams }))),
    /** PATCH /v1/spaces/{space_id}/memories/{memory_id}. */
    patchMemory: (spaceId: string, memoryId: string, patch: Input<typeof PatchMemoryRequest>) =>
      effect((c) => Effect.flatMap(decoded(PatchMemoryRequest, patch), (payload) => c.memories.patch({ path: { space_id: spaceId, memory_id: memoryId }, payload }))),
    /** DELETE /v1/spaces/{space_id}/memories/{memory_id}. */
    deleteMemory: (spaceId: string, memoryId: string) => effect((c) => c.memories.delete({ path: { space_id: spaceId, memory_id: memoryId } })),
    /** GET /v1/spaces/{space_id}/memories/{memory_id}/history. */
    memoryHistory: (spaceId: string, memoryId: string) => effect((c) => c.memories.history({ path: { space_id: spaceId, memory_id: memoryId } })),
    /** GET /v1/spaces/{space_id}/jobs/{job_id}. */
    getJob,
    /** Polls a queued job until it is completed, failed or cancelled; rejects with code `timeout` after `timeoutMs` (60 s). */
    waitForJob: (spaceId: string, jobId: string, wait: { readonly timeoutMs?: number; readonly intervalMs?: number } = {}) =>
      effect((c) =>
        Effect.gen(function*() {
          const deadline = (yield* Clock.currentTimeMillis) + (wait.timeoutMs ?? 60_000)
          while (true) {
            const job = yield* c.memories.job({ path: { space_id: spaceId, job_id: jobId } })
            if (FINISHED.has(job.status)) return job
            if ((yield* Clock.currentTimeMillis) >= deadline) {
              return yield* Effect.fail(new EngramError({ status: 0, code: "timeout", message: `job ${jobId} is still ${job.status} after ${wait.timeoutMs ?? 60_000} ms` }))
            }
            yield* Effect.sleep(Duration.millis(wait.intervalMs ?? 200))
          }
        })),
    /** GET /v1/receipts/{request_id}. */
    receipt: (requestId: string) => effect((c) => c.memories.receipt({ path: { request_id: requestId } })),
    /** POST /v1/spaces. */
    createSpace: (request: Input<typeof CreateSpaceRequest>) => effect((c) => Effect.flatMap(decoded(CreateSpaceRequest, request), (payload) => c.spaces.create({ payload }))),
    /** GET /v1/spaces. */
    listSpaces: (query: Query<typeof SpaceListQuery> = {}) =>
      effect((c) => Effect.flatMap(decoded(SpaceListQuery, asUrlParams(query)), (urlParams) => c.spaces.list({ urlParams }))),
    /** GET /v1/spaces/{space_id}. */
    getSpace: (spaceId: string) => effect((c) => c.spaces.get({ path: { space_id: spaceId } })),
    /** DELETE /v1/spaces/{space_id}. */
    deleteSpace: (spaceId: string) => effect((c) => c.spaces.delete({ path: { space_id: spaceId } })),
    /** POST /v1/reason: an answer from the space's memories. */
    reason: (request: Input<typeof ReasonRequest>) => effect((c) => Effect.flatMap(decoded(ReasonRequest, request), (payload) => c.reason.reason({ payload }))),
    /** The proxy, OpenAI chat-completions format (POST /v1/chat/completions); `headers` carry X-Engram-* tunables. */
    chatCompletions: proxy("/v1/chat/completions"),
    /** The proxy, OpenAI responses format (POST /v1/responses). */
    responses: proxy("/v1/responses"),
    /** The proxy, Anthropic messages format (POST /v1/messages). */
    messages: proxy("/v1/messages"),
    /** Any other operation, through the typed client: `effect((c) => c.webhooks.list({ path: { space_id } }))`. */
    effect,
    /** Lets go of the client's resources. */
    close: () => runtime.dispose()
  }
}

export type Client = ReturnType<typeof createClient>
