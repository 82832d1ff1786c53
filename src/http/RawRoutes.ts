/**
 * Routes served beside the HttpApi (the proxy's wire formats, MCP): their
 * bodies are not one schema, and they stream. They authenticate with the same
 * Authenticator and fail with the same tagged errors, rendered as the envelope.
 */
import { HttpApiSchema, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Schema } from "effect"
import type { PrincipalShape } from "../domain/Principal.ts"
import { Authenticator } from "../identity/Authenticator.ts"
import { Metering } from "../metering/Metering.ts"

/** A domain error (`Schema.TaggedError` with `code` and a status annotation) as the response the envelope reads. */
export const errorResponse = (error: unknown) => {
  const e = error as { code?: unknown; message?: unknown; constructor?: { ast?: unknown } }
  if (typeof e?.code === "string" && typeof e.message === "string") {
    const schema: unknown = e.constructor
    const status = Schema.isSchema(schema) ? HttpApiSchema.getStatusErrorAST(schema.ast) : 500
    return HttpServerResponse.unsafeJson({ code: e.code, message: e.message }, { status })
  }
  return HttpServerResponse.unsafeJson({ code: "internal_error", message: "internal error" }, { status: 500 })
}

/** Typed failures become their documented status and code; defects stay defects (500, logged by the envelope). */
export const renderFailures = <R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
  handler.pipe(
    Effect.catchAllCause((cause) =>
      Option.match(Cause.failureOption(cause), {
        onNone: () => Effect.failCause(cause as Cause.Cause<never>),
        onSome: (error) => Effect.succeed(errorResponse(error))
      })
    )
  )

/** `Authorization: Bearer …`, or (where `allowApiKeyHeader`) the messages format's `x-api-key`. */
export const authenticate = (options: { readonly allowApiKeyHeader: boolean }) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const authenticator = yield* Authenticator
    const apiKey = request.headers["x-api-key"]
    const authorization = request.headers["authorization"] ??
      (options.allowApiKeyHeader && apiKey !== undefined ? `Bearer ${apiKey}` : undefined)
    const principal: PrincipalShape = yield* authenticator.authenticate({ authorization, orgId: request.headers["x-svc-org-id"] })
    yield* (yield* Metering).admit(principal)
    return principal
  })
