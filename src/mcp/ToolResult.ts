/**
 * What a tool call answers: the result as JSON text, or a failure as a tool
 * result with `isError: true` carrying the same `{error: {code, message,
 * request_id}}` the HTTP API would send. A tool call never crashes the server.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option, ParseResult, Runtime, Schema } from "effect"
import { BadRequest, ValidationError } from "../domain/Errors.ts"
import { fromDecodeIssues } from "../http/ErrorEnvelope.ts"

const text = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value, null, 2) }] })

const failure = (requestId: string, code: string, message: string): CallToolResult => ({
  ...text({ error: { code, message, request_id: requestId } }),
  isError: true
})

/** A domain error carries its wire code; anything else is a bug, and its cause goes to the log only. */
const fromCause = (requestId: string, cause: Cause.Cause<unknown>) => {
  const error = Option.getOrUndefined(Cause.failureOption(cause)) as { code?: unknown; message?: unknown } | undefined
  if (typeof error?.code === "string" && typeof error.message === "string") return failure(requestId, error.code, error.message)
  return failure(requestId, "internal_error", "internal error")
}

/** Arguments the SDK's schema let through are decoded again with the HTTP API's own schema, so both refuse the same input. */
export const decodeArguments = <A, I>(schema: Schema.Schema<A, I, never>, input: unknown) =>
  Schema.decodeUnknown(schema)(input, { errors: "all" }).pipe(
    Effect.mapError((error) => {
      const decoded = fromDecodeIssues(ParseResult.ArrayFormatter.formatErrorSync(error))
      return decoded.code === "bad_request"
        ? new BadRequest({ message: decoded.message })
        : new ValidationError({ message: decoded.message })
    })
  )

/** Where tool effects run: the HTTP request's runtime (its services, span and request id). */
export interface ToolRunner {
  readonly runtime: Runtime.Runtime<never>
  readonly requestId: string
}

/** Runs a tool's effect to a tool result; the effect is interrupted when the client cancels the call. */
export const runTool = (runner: ToolRunner, effect: Effect.Effect<unknown, unknown>, signal: AbortSignal) =>
  Runtime.runPromiseExit(runner.runtime)(
    effect.pipe(Effect.tapErrorCause((cause) => Cause.isDie(cause) ? Effect.logError("MCP tool failed", cause) : Effect.void)),
    { signal }
  ).then(Exit.match({
    onSuccess: text,
    onFailure: (cause) => fromCause(runner.requestId, cause)
  }))
