/**
 * The one rule for every string a request carries, wherever it is stored or
 * queried: no NUL character and no unpaired UTF-16 surrogate. PostgreSQL
 * refuses both in `text` and `jsonb`, so they are refused here, at the edge,
 * with a 422 naming the field (never echoing the value).
 */
import { Schema } from "effect"

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSAFE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const isSafeText = (text: string): boolean => !UNSAFE.test(text)

/** Text the service did not get from a caller (a model's answer) made storable: each offending unit becomes U+FFFD. */
export const toSafeText = (text: string): string => text.replace(new RegExp(UNSAFE.source, "g"), "\uFFFD")

export const UNSAFE_TEXT_MESSAGE = "must not contain NUL characters or unpaired surrogates"

/** A string under the rule; bounds and formats are piped on top of it. */
export const SafeString = Schema.String.pipe(
  Schema.filter(isSafeText, { message: () => UNSAFE_TEXT_MESSAGE, jsonSchema: {} })
)

/** An id taken from the URL path: safe, and of a sane length. */
export const PathSegment = SafeString.pipe(Schema.minLength(1), Schema.maxLength(256))

/** Why a JSON value breaks the rule or the nesting limit, or undefined when it is fine. Iterative: depth cannot blow the stack. */
export const jsonValueProblem = (value: unknown, maxDepth: number): string | undefined => {
  const pending: Array<readonly [unknown, number]> = [[value, 1]]
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!
    if (typeof current === "string") {
      if (!isSafeText(current)) return UNSAFE_TEXT_MESSAGE
      continue
    }
    if (current === null || typeof current !== "object") continue
    if (depth > maxDepth) return `must not nest deeper than ${maxDepth} levels`
    if (Array.isArray(current)) {
      for (const item of current) pending.push([item, depth + 1])
      continue
    }
    for (const [key, item] of Object.entries(current)) {
      if (!isSafeText(key)) return `keys ${UNSAFE_TEXT_MESSAGE}`
      pending.push([item, depth + 1])
    }
  }
  return undefined
}

/** The UTF-8 size of a string, counted without encoding it (the domain runs in browsers too). */
export const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** The UTF-8 size of a value serialized as JSON. */
export const jsonBytes = (value: unknown): number => utf8Bytes(JSON.stringify(value) ?? "")
