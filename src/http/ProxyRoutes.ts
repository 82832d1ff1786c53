/**
 * The drop-in proxy: chat-completions, responses and messages, served beside
 * the HttpApi because their bodies carry unknown fields to forward and their
 * answers stream as server-sent events.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { Authenticator } from "../identity/Authenticator.ts"
import type { Metering } from "../metering/Metering.ts"
import { BadRequest } from "../domain/Errors.ts"
import { ChatCompletions } from "../proxy/formats/ChatCompletions.ts"
import type { WireFormat } from "../proxy/formats/Common.ts"
import { Messages } from "../proxy/formats/Messages.ts"
import { Responses } from "../proxy/formats/Responses.ts"
import { MemoryWrapper, type Prepared } from "../proxy/MemoryWrapper.ts"
import { readTunables } from "../proxy/Tunables.ts"
import { authenticate, renderFailures } from "./RawRoutes.ts"
import type { RawRoutes } from "./Routes.ts"

const readBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const body = yield* request.json.pipe(
    Effect.mapError(() => new BadRequest({ message: "the request body is not valid JSON" }))
  )
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return yield* new BadRequest({ message: "the request body must be a JSON object" })
  }
  return body as Record<string, unknown>
})

const memoryHeaders = (prepared: Prepared) => ({
  "x-svc-memories-injected": String(prepared.memoriesInjected),
  "x-svc-space-id": prepared.spaceId
})

const serve = (format: WireFormat, options: { readonly allowApiKeyHeader: boolean }) =>
  renderFailures(Effect.gen(function*() {
    const principal = yield* authenticate(options)
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* readBody
    const parsed = yield* format.parse(body)
    const turn = { ...parsed.turn, tunables: yield* readTunables(body, request.headers) }
    const wrapper = yield* MemoryWrapper
    if (!parsed.stream) {
      const result = yield* wrapper.complete(principal, turn)
      return HttpServerResponse.unsafeJson(format.respond(result, result.completion), { headers: memoryHeaders(result) })
    }
    const result = yield* wrapper.stream(principal, turn)
    return HttpServerResponse.stream(format.events(result, result.parts, parsed.includeUsage).pipe(Stream.encodeText), {
      contentType: "text/event-stream",
      headers: { ...memoryHeaders(result), "cache-control": "no-cache" }
    })
  }))

const ROUTES = [
  { path: "/v1/chat/completions", format: ChatCompletions, allowApiKeyHeader: false },
  { path: "/v1/responses", format: Responses, allowApiKeyHeader: false },
  { path: "/v1/messages", format: Messages, allowApiKeyHeader: true }
] as const

/** The proxy's three wire formats, for the route table. */
export const PROXY_ROUTES: RawRoutes = { routes: ROUTES.map((route) => ["POST", route.path] as const) }

export const ProxyRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const services = yield* Effect.context<MemoryWrapper | Authenticator | Metering>()
    for (const route of ROUTES) yield* router.post(route.path, serve(route.format, route).pipe(Effect.provide(services)))
  })
)
