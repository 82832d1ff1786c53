/**
 * `POST /mcp`: the remote MCP endpoint (streamable HTTP, stateless, JSON
 * answers), authenticated with the API's own keys. Other methods answer 405,
 * as a stateless server does (there is no session stream to GET or DELETE).
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, FiberRef, Layer, Option } from "effect"
import { BadRequest } from "../domain/Errors.ts"
import { CurrentRequestId } from "../domain/RequestContext.ts"
import type { Authenticator } from "../identity/Authenticator.ts"
import type { Metering } from "../metering/Metering.ts"
import { McpTools } from "../mcp/McpTools.ts"
import { makeToolServer, serveOnce } from "../mcp/ToolServer.ts"
import { defaultCode } from "./ErrorEnvelope.ts"
import { authenticate, renderFailures } from "./RawRoutes.ts"
import { registerRoute } from "./Routes.ts"

/** Headers the web Request recomputes from its own body. */
const HOP_HEADERS = new Set(["content-length", "transfer-encoding", "connection", "keep-alive"])

const toWebRequest = (request: HttpServerRequest.HttpServerRequest, body: string) => {
  const url = Option.getOrElse(HttpServerRequest.toURL(request), () => new URL(request.url, "http://localhost"))
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (!HOP_HEADERS.has(name)) headers.set(name, value)
  return new Request(url, { method: request.method, headers, body })
}

/** The transport's refusals (406, 415, 400 unparseable JSON-RPC, 413) keep their message inside the envelope. */
const transportFailure = (status: number, text: string) => {
  let message = "the MCP request was refused"
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } }
    if (typeof parsed.error?.message === "string") message = parsed.error.message
  } catch {
    // not JSON: keep the generic message
  }
  const code = status === 406 ? "not_acceptable" : defaultCode(status)
  return HttpServerResponse.unsafeJson({ code, message }, { status })
}

const handle = Effect.gen(function*() {
  const principal = yield* authenticate({ allowApiKeyHeader: false })
  const request = yield* HttpServerRequest.HttpServerRequest
  const body = yield* Effect.mapError(request.text, () => new BadRequest({ message: "the request body could not be read" }))
  const tools = yield* McpTools
  const runner = { runtime: yield* Effect.runtime<never>(), requestId: yield* FiberRef.get(CurrentRequestId) }
  const response = yield* Effect.promise((signal) =>
    serveOnce(makeToolServer(tools, principal, runner), toWebRequest(request, body), signal)
  )
  if (response.status < 400) return HttpServerResponse.fromWeb(response)
  return transportFailure(response.status, yield* Effect.promise(() => response.text()))
})

export const McpRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<McpTools | Authenticator | Metering>()
    registerRoute("POST", "/mcp")
    yield* router.post("/mcp", renderFailures(handle).pipe(Effect.provide(context)))
  })
).pipe(Layer.provide(McpTools.Default))
