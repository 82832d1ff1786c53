/**
 * The one wire shape of every failure: `{"error":{"code","message","request_id"}}`.
 * Typed errors arrive already encoded by HttpApi (`{_tag, code, message}`);
 * decode failures, unknown routes, bad JSON and defects are mapped here.
 */
import { HttpServerResponse } from "@effect/platform"

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

const describeIssue = (issue: DecodeIssue) =>
  issue.path.length === 0 ? issue.message : `${issue.path.map(String).join(".")}: ${issue.message}`

/**
 * HttpApi's schema failures: a missing required field or a body that is not an
 * object is a 400 `bad_request`; an unknown or malformed field a 422 `validation_error`.
 */
export const fromDecodeIssues = (issues: ReadonlyArray<DecodeIssue>): { status: number; code: string; message: string } => {
  const missing = issues.filter((i) => i._tag === "Missing")
  const rootLevel = issues.filter((i) => i.path.length === 0)
  const message = (picked: ReadonlyArray<DecodeIssue>) => picked.slice(0, 5).map(describeIssue).join("; ") || "invalid request"
  if (missing.length > 0) return { status: 400, code: "bad_request", message: message(missing) }
  if (rootLevel.length > 0) return { status: 400, code: "bad_request", message: "the request body must be a JSON object" }
  return { status: 422, code: "validation_error", message: message(issues) }
}

/** Reads what HttpApi encoded and decides the documented status, code and message. */
export const classifyBody = (status: number, body: unknown): { status: number; code: string; message: string } => {
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>
    if (record._tag === "HttpApiDecodeError" && Array.isArray(record.issues)) {
      return fromDecodeIssues(record.issues as ReadonlyArray<DecodeIssue>)
    }
    if (typeof record.code === "string" && typeof record.message === "string") {
      return { status, code: record.code, message: record.message }
    }
    if (typeof record.error === "object" && record.error !== null) {
      const inner = record.error as Record<string, unknown>
      if (typeof inner.code === "string") {
        return { status, code: inner.code, message: typeof inner.message === "string" ? inner.message : defaultCode(status) }
      }
    }
  }
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
