/**
 * What a tool call answers: the result as JSON text, or a failure as a tool
 * result with `isError: true` carrying the same `{error: {code, message,
 * request_id}}` the HTTP API would send. A tool call never crashes the server.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option, ParseResult, Runtime, Schema } from "effect"
import { BadRequest, ValidationError } from "../domain/Errors.ts"
import { fromDecodeIssues } from "../http/ErrorEnvelope.ts"
import { escapeRecalled, fence, randomBoundary } from "../security/Fence.ts"

const text = (value: unknown): CallToolResult => ({ content: [{ type: "text", text: JSON.stringify(value, null, 2) }] })

/** Every string of a JSON value as it may be shown to a model inside a fenced section. */
const escapeStrings = (value: unknown): unknown => {
  if (typeof value === "string") return escapeRecalled(value)
  if (Array.isArray(value)) return value.map(escapeStrings)
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeStrings(v)]))
  return value
}

/**
 * A result that carries stored memories (retrieve, a user's profile, a memory
 * model's answer): the model reads it as a fenced section of data whose
 * strings are escaped like a block's lines (src/security/Fence.ts); a program
 * reads the value itself, unescaped, as `structuredContent`.
 */
export const recalledResult = (value: unknown, boundary: string): CallToolResult => {
  const body = JSON.stringify(escapeStrings(value), null, 2)
  return {
    content: [{ type: "text", text: fence([body], "relevance", boundary) }],
    ...(value !== null && typeof value === "object" && !Array.isArray(value) ? { structuredContent: Object.fromEntries(Object.entries(value)) } : {})
  }
}

const failure = (requestId: string, code: string, message: string): CallToolResult => ({
  ...text({ error: { code, message, request_id: requestId } }),
  isError: true
})

/** A call the credential may not make (a space or a write it was not granted): `forbidden`, as the HTTP API says it. */
export const forbiddenCall = (requestId: string, message: string) => failure(requestId, "forbidden", message)

/** A domain error carries its wire code; anything else is a bug, and its cause goes to the log only. */
const fromCause = (requestId: string, cause: Cause.Cause<unknown>) => {
  const error = Option.getOrUndefined(Cause.failureOption(cause)) as { code?: unknown; message?: unknown } | undefined
  if (typeof error?.code === "string" && typeof error.message === "string") return failure(requestId, error.code, error.message)
  return failure(requestId, "internal_error", "internal error")
}

/** What a refusal of the advertised schema says about one argument (zod's issue, as much as is read here). */
interface ArgumentIssue {
  readonly code: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly keys?: ReadonlyArray<string> | undefined
}

const valueAt = (args: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
  let current = args
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined
    current = Reflect.get(current, key)
  }
  return current
}

/**
 * Arguments the tool's advertised JSON Schema refuses, in the envelope with
 * the HTTP API's codes: a missing argument is `bad_request`, an unknown or
 * malformed one `validation_error`; the message names the argument, never its value.
 */
export const argumentFailure = (requestId: string, issues: ReadonlyArray<ArgumentIssue>, args: unknown): CallToolResult => {
  const described = issues.flatMap((issue) => {
    if (issue.code === "unrecognized_keys") {
      return (issue.keys ?? []).map((key) => ({ _tag: "Unexpected", path: [...issue.path, key], message: "" }))
    }
    if (issue.code === "invalid_type" && valueAt(args, issue.path) === undefined) {
      return [{ _tag: "Missing", path: issue.path, message: "" }]
    }
    return [{ _tag: "Type", path: issue.path, message: issue.message }]
  })
  const decoded = fromDecodeIssues(described)
  return failure(requestId, decoded.code, decoded.message)
}

/** A tool name that is not served; the message lists the tools (and names the one asked for when it looks like a name). */
export const unknownTool = (requestId: string, name: string, served: ReadonlyArray<string>): CallToolResult =>
  failure(
    requestId,
    "not_found",
    `${/^[A-Za-z0-9_.-]{1,64}$/.test(name) ? `no tool named ${name}` : "no such tool"}; the tools are ${served.join(", ")}`
  )

/** Arguments the advertised schema let through are decoded again with the HTTP API's own schema, so both refuse the same input. */
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

/**
 * Runs a tool's effect to a tool result; the effect is interrupted when the
 * client cancels the call. A tool that answers with stored memories is
 * `recalled`: its answer is fenced as data.
 */
export const runTool = (runner: ToolRunner, effect: Effect.Effect<unknown, unknown>, signal: AbortSignal, recalled = false) =>
  Runtime.runPromiseExit(runner.runtime)(
    effect.pipe(Effect.tapErrorCause((cause) => Cause.isDie(cause) ? Effect.logError("MCP tool failed", cause) : Effect.void)),
    { signal }
  ).then(Exit.match({
    onSuccess: (value) => recalled ? recalledResult(value, randomBoundary()) : text(value),
    onFailure: (cause) => fromCause(runner.requestId, cause)
  }))
