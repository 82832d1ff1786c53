/**
 * The outermost HTTP middleware: gives every request an id (a sane client-sent
 * `X-Request-ID` is echoed), puts it on every response and in every log line,
 * and renders every failure in the documented envelope. Never a stack trace.
 *
 * It works as a pre-response handler because the server turns failures into
 * responses (404 for no route, 400 for an unreadable body, 500 for a defect)
 * before any middleware sees them.
 */
import { HttpApp, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, Either, Option, Schema } from "effect"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { CurrentRequestId } from "../domain/RequestContext.ts"
import { CurrentMeterReport, newReport, reportHeaders } from "../metering/Metering.ts"
import { guardRequest, type Refusal } from "./BodyGuard.ts"
import { classifyBody, envelope } from "./ErrorEnvelope.ts"
import { errorResponse } from "./RawRoutes.ts"
import { recordRequest } from "../observability/Metrics.ts"
import { RouteTable, type RouteTableService } from "./Routes.ts"

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export const requestIdOf = (header: string | undefined) =>
  header !== undefined && SANE_REQUEST_ID.test(header) ? header : `req_${randomBase62(24)}`

const pathOf = (url: string) => url.split("?")[0] ?? "/"

const readJson = (response: HttpServerResponse.HttpServerResponse): unknown => {
  if (response.body._tag !== "Uint8Array") return undefined
  try {
    return JSON.parse(new TextDecoder().decode(response.body.body))
  } catch {
    return undefined
  }
}

const OAuthErrorBody = Schema.Struct({ error: Schema.String, error_description: Schema.String })

/** A protocol's own refusal (an RFC 6749 error body, or an HTML page), where the path keeps them (see RawRoutes.ownErrors). */
const isOwnError = (response: HttpServerResponse.HttpServerResponse, body: unknown) =>
  (response.body._tag === "Uint8Array" && response.body.contentType.startsWith("text/html")) ||
  Option.isSome(Schema.decodeUnknownOption(OAuthErrorBody)(body))

/** Any response of status >= 400, whoever produced it, leaves as the envelope (except a protocol's own refusal, above). */
const toEnvelope = (
  routes: RouteTableService,
  requestId: string,
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
) => {
  if (response.status < 400) return response
  const body = readJson(response)
  if (routes.keepsOwnErrors(pathOf(request.url)) && isOwnError(response, body)) return response
  if (response.status === 404 && body === undefined) {
    const path = pathOf(request.url)
    const allowed = routes.allowedMethods(path)
    if (allowed.length > 0) {
      return envelope(requestId, {
        status: 405,
        code: "method_not_allowed",
        message: `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}`
      }, { allow: allowed.join(", ") })
    }
    return envelope(requestId, { status: 404, code: "not_found", message: `no route for ${request.method} ${path}` })
  }
  if (response.status === 400 && body === undefined) {
    return envelope(requestId, { status: 400, code: "bad_request", message: "the request body is not valid JSON" })
  }
  return envelope(requestId, classifyBody(response.status, body), response.headers)
}

/** A body refused at the edge (past the size limit, the connection closes shortly after the answer: see BodyGuard). */
const refusal = (error: Refusal) => errorResponse(error)

const expected = (cause: Cause.Cause<unknown>) => {
  if (Cause.isInterruptedOnly(cause)) return true
  const failure = Cause.squash(cause)
  return failure instanceof HttpServerError.RouteNotFound || failure instanceof HttpServerError.RequestError
}

export const envelopeMiddleware = <E, R>(app: HttpApp.Default<E, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const routes = yield* RouteTable
    const requestId = requestIdOf(request.headers["x-request-id"])
    const started = yield* Clock.currentTimeMillis
    // Filled in by metering as the request is authenticated and charged; an unauthenticated one reports zeros.
    const meter = newReport()
    yield* Effect.annotateCurrentSpan("request_id", requestId)
    const finish = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => Effect.gen(function*() {
      const enveloped = HttpServerResponse.setHeaders(toEnvelope(routes, requestId, request, response), {
        ...reportHeaders(meter),
        "x-request-id": requestId
      })
      const final = enveloped.status === 429 && meter.retryAfterSeconds !== null
        ? HttpServerResponse.setHeader(enveloped, "retry-after", String(meter.retryAfterSeconds))
        : enveloped
      const durationMs = (yield* Clock.currentTimeMillis) - started
      return yield* Effect.as(
        Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            request_id: requestId,
            method: request.method,
            path: pathOf(request.url),
            status: final.status,
            duration_ms: durationMs
          }),
          Effect.zipRight(recordRequest(request.method, routes.routeOf(request.method, pathOf(request.url)), final.status, durationMs / 1000))
        ),
        final
      )
    })
    yield* HttpApp.appendPreResponseHandler(finish)
    // A refusal here never reaches the app, so it is finished here too.
    const guarded = yield* Effect.either(guardRequest(request))
    if (Either.isLeft(guarded)) return yield* finish(request, refusal(guarded.left))
    return yield* app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, guarded.right),
      Effect.tapErrorCause((cause) => expected(cause) ? Effect.void : Effect.logError("unhandled failure", cause)),
      Effect.annotateLogs("request_id", requestId),
      Effect.locally(CurrentRequestId, requestId),
      Effect.locally(CurrentMeterReport, meter)
    )
  })
