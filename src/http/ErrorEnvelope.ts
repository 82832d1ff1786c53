/**
 * The one wire shape of every failure: `{"error":{"code","message","request_id"}}`.
 * Typed errors arrive already encoded by HttpApi (`{_tag, code, message}`);
 * decode failures, unknown routes, bad JSON and defects are mapped here.
 */
import { HttpServerResponse } from "@effect/platform"
import { Option, Schema } from "effect"

export interface Envelope {
  readonly error: { readonly code: string; readonly message: string; readonly request_id: string }
}

const DEFAULT_CODES: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "validation_error",
  429: "rate_limited",
  500: "internal_error",
  503: "service_unavailable"
}

export const defaultCode = (status: number) => DEFAULT_CODES[status] ?? (status >= 500 ? "internal_error" : "bad_request")

interface DecodeIssue {
  readonly _tag: string
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Longest message a decode failure may carry; the expectations of a few fields fit well within it. */
const MAX_MESSAGE = 400

/** A field name as sent: shown when it looks like one, otherwise described (it may be content). */
const FIELD = /^[A-Za-z0-9_.:@$-]{1,64}$/
const segment = (key: PropertyKey) =>
  typeof key === "number" ? String(key) : typeof key === "string" && FIELD.test(key) ? key : "(a field)"

const pathOf = (path: ReadonlyArray<PropertyKey>) => path.map(segment).join(".")

/**
 * Schema's own messages embed the value they refused ("Expected string,
 * actual <the value>", "Unable to decode <the value> into a number"): keep
 * the expectation, never the value. Messages of our own filters pass as they are.
 */
const expectation = (issue: DecodeIssue) => {
  if (issue._tag === "Missing") return "is missing"
  if (issue._tag === "Unexpected") return "is not a known field"
  if (issue._tag === "Forbidden") return "could not be checked"
  const expected = /^Expected ([\s\S]*?), actual /.exec(issue.message)
  if (expected) return `expected ${expected[1]}`
  const decode = /^Unable to decode [\s\S]* into ([\s\S]*)$/.exec(issue.message)
  if (decode) return `expected ${decode[1]}`
  return issue.message
}

/** A union's alternatives as one expectation; the `undefined` of an optional field is no alternative worth naming. */
const merge = (said: ReadonlyArray<string>) => {
  const expected = said.filter((s) => s.startsWith("expected ")).map((s) => s.slice("expected ".length))
  const named = expected.filter((e) => e !== "undefined")
  const others = said.filter((s) => !s.startsWith("expected "))
  const alternatives = named.length > 0 || others.length > 0 ? named : expected
  return [...others, ...(alternatives.length > 0 ? [`expected ${alternatives.join(" or ")}`] : [])].join("; ")
}

/** One line per field: `items: expected an array of at most 100 item(s)`; a union's alternatives joined by "or". */
const describe = (issues: ReadonlyArray<DecodeIssue>) => {
  const byPath = new Map<string, Array<string>>()
  for (const issue of issues) {
    const path = pathOf(issue.path)
    const said = byPath.get(path) ?? []
    const text = expectation(issue)
    if (!said.includes(text)) said.push(text)
    byPath.set(path, said)
  }
  const lines = [...byPath].slice(0, 5).map(([path, said]) => (path === "" ? merge(said) : `${path}: ${merge(said)}`))
  const message = lines.join("; ") || "invalid request"
  return message.length <= MAX_MESSAGE ? message : `${message.slice(0, MAX_MESSAGE - 1)}…`
}

/**
 * HttpApi's schema failures: a missing required field or a body that is not an
 * object is a 400 `bad_request`; an unknown or malformed field a 422 `validation_error`.
 * Messages name the field and the expectation, never the value sent.
 */
export const fromDecodeIssues = (issues: ReadonlyArray<DecodeIssue>): { status: number; code: string; message: string } => {
  const missing = issues.filter((i) => i._tag === "Missing")
  const rootLevel = issues.filter((i) => i.path.length === 0)
  if (missing.length > 0) return { status: 400, code: "bad_request", message: describe(missing) }
  if (rootLevel.length > 0) return { status: 400, code: "bad_request", message: "the request body must be a JSON object" }
  return { status: 422, code: "validation_error", message: describe(issues) }
}

const EncodedIssue = Schema.Struct({
  _tag: Schema.String,
  path: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  message: Schema.String
})
const DecodeErrorBody = Schema.Struct({ _tag: Schema.Literal("HttpApiDecodeError"), issues: Schema.Array(EncodedIssue) })
const TaggedErrorBody = Schema.Struct({ code: Schema.String, message: Schema.String })
const EnvelopeBody = Schema.Struct({ error: Schema.Struct({ code: Schema.String, message: Schema.optional(Schema.String) }) })

/** Reads what HttpApi encoded and decides the documented status, code and message. */
export const classifyBody = (status: number, body: unknown): { status: number; code: string; message: string } => {
  const decodeError = Schema.decodeUnknownOption(DecodeErrorBody)(body)
  if (Option.isSome(decodeError)) return fromDecodeIssues(decodeError.value.issues)
  const tagged = Schema.decodeUnknownOption(TaggedErrorBody)(body)
  if (Option.isSome(tagged)) return { status, code: tagged.value.code, message: tagged.value.message }
  const wrapped = Schema.decodeUnknownOption(EnvelopeBody)(body)
  if (Option.isSome(wrapped)) return { status, code: wrapped.value.error.code, message: wrapped.value.error.message ?? defaultCode(status) }
  return { status, code: defaultCode(status), message: defaultMessage(status) }
}

const defaultMessage = (status: number) =>
  status === 404 ? "not found" : status >= 500 ? "internal error" : defaultCode(status).replace(/_/g, " ")

export const envelope = (
  requestId: string,
  failure: { status: number; code: string; message: string },
  headers?: Record<string, string>
) =>
  HttpServerResponse.unsafeJson(
    { error: { code: failure.code, message: failure.message, request_id: requestId } } satisfies Envelope,
    { status: failure.status, ...(headers ? { headers } : {}) }
  )
