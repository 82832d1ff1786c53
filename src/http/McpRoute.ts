/**
 * `POST /mcp`: the remote MCP endpoint (streamable HTTP, stateless, JSON
 * answers), authenticated with the API's own keys or an OAuth access token
 * (docs/oauth.md). Other methods answer 405, as a stateless server does
 * (there is no session stream to GET or DELETE). A browser Origin must be
 * allowed (DNS rebinding); a 401 points at the protected resource metadata.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, FiberRef, Layer, Option, Schema } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { BadRequest, Forbidden } from "../domain/Errors.ts"
import { ACCESS_TOKEN_PREFIX } from "../domain/OAuth.ts"
import { CurrentRequestId } from "../domain/RequestContext.ts"
import type { Authenticator } from "../identity/Authenticator.ts"
import { Metering } from "../metering/Metering.ts"
import { McpTools } from "../mcp/McpTools.ts"
import { type ToolLimits, UNLIMITED } from "../mcp/ToolLimits.ts"
import { arrivedOnLoopback, baseUrl, hostAllowed, originAllowed, resourceMetadataUrl, resourceOf } from "../oauth/OAuthMetadata.ts"
import { OAuthTokens } from "../oauth/OAuthTokens.ts"
import { defaultCode } from "./ErrorEnvelope.ts"
import { authenticate, renderFailures } from "./RawRoutes.ts"
import type { RawRoutes } from "./Routes.ts"

/** Headers the web Request recomputes from its own body. */
const HOP_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive"])

const toWebRequest = (request: HttpServerRequest.HttpServerRequest, body: string) => {
  const url = Option.getOrElse(HttpServerRequest.toURL(request), () => new URL(request.url, "http://localhost"))
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (!HOP_HEADERS.has(name)) headers.set(name, value)
  return new Request(url, { method: request.method, headers, body })
}

const decodeRefusal = Schema.decodeUnknownEither(Schema.parseJson(Schema.Struct({ error: Schema.Struct({ message: Schema.String }) })))

/** The transport's refusals (406, 415, 400 unparseable JSON-RPC, 413) keep their message inside the envelope. */
const transportFailure = (status: number, text: string) => {
  // A JSON-RPC error's message when the body is one; otherwise a generic message.
  const message = Either.match(decodeRefusal(text), {
    onLeft: () => "the MCP request was refused",
    onRight: (refusal) => refusal.error.message
  })
  const code = status === 406 ? "not_acceptable" : defaultCode(status)
  return HttpServerResponse.unsafeJson({ code, message }, { status })
}

const OAUTH_BEARER = new RegExp(`^Bearer +(${ACCESS_TOKEN_PREFIX}[A-Za-z0-9]+) *$`, "i")

/** An OAuth access token (bound to this server's /mcp, limited to its grant), or the API's own credentials. */
const authenticateMcp = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const oauth = OAUTH_BEARER.exec(request.headers["authorization"] ?? "")
  if (oauth === null) return { principal: yield* authenticate({ allowApiKeyHeader: false }), limits: UNLIMITED }
  const resource = resourceOf(baseUrl(yield* AppConfig, request))
  const grant = yield* (yield* OAuthTokens).verifyAccess(oauth[1]!, resource, request.headers["x-svc-org-id"])
  yield* (yield* Metering).admit(grant.principal)
  const limits: ToolLimits = { spaces: grant.spaces, canWrite: grant.canWrite }
  return { principal: grant.principal, limits }
})

/** DNS rebinding: a browser Origin must be allowed, and a request reaching loopback must name a host of ours. */
const guardRebinding = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const config = yield* AppConfig
  const origin = request.headers["origin"]
  if (origin !== undefined && !originAllowed(config, origin)) {
    return yield* new Forbidden({ message: "requests from this Origin are not allowed on /mcp (see MCP_ALLOWED_ORIGINS)" })
  }
  if (arrivedOnLoopback(request) && !hostAllowed(config, request.headers["host"])) {
    return yield* new Forbidden({ message: "this Host is not served on a loopback address (set PUBLIC_URL or MCP_ALLOWED_ORIGINS)" })
  }
})

const handle = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  yield* guardRebinding
  const { limits, principal } = yield* authenticateMcp
  const body = yield* Effect.mapError(request.text, () => new BadRequest({ message: "the request body could not be read" }))
  const tools = yield* McpTools
  const runner = { runtime: yield* Effect.runtime<never>(), requestId: yield* FiberRef.get(CurrentRequestId) }
  // The MCP server library (the SDK and zod: about 0.3 s and 24 MB) loads with the first request to /mcp, not at start.
  const { makeToolServer, serveOnce } = yield* Effect.promise(() => import("../mcp/ToolServer.ts"))
  const response = yield* Effect.promise((signal) =>
    serveOnce(makeToolServer(tools, principal, runner, limits), toWebRequest(request, body), signal)
  )
  if (response.status < 400) return HttpServerResponse.fromWeb(response)
  return transportFailure(response.status, yield* Effect.promise(() => response.text()))
})

/** Every 401 says where to discover how to authorize (RFC 9728 §5.1); a refused token is `invalid_token` (RFC 6750 §3.1). */
const challenge = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.gen(function*() {
    if (response.status !== 401) return response
    const request = yield* HttpServerRequest.HttpServerRequest
    const metadata = `resource_metadata="${resourceMetadataUrl(baseUrl(yield* AppConfig, request))}"`
    const presented = (request.headers["authorization"] ?? "").trim() !== ""
    return HttpServerResponse.setHeader(response, "www-authenticate", presented ? `Bearer error="invalid_token", ${metadata}` : `Bearer ${metadata}`)
  })

/** MCP's one route, for the route table. */
export const MCP_ROUTES: RawRoutes = { routes: [["POST", "/mcp"]] }

export const McpRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<McpTools | Authenticator | Metering | OAuthTokens | AppConfig>()
    yield* router.post("/mcp", renderFailures(handle).pipe(Effect.flatMap(challenge), Effect.provide(context)))
  })
).pipe(Layer.provide([McpTools.Default, OAuthTokens.Default]))
