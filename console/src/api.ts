/**
 * The console's client of Engram's own HTTP API, signed in with a session
 * token (kept in sessionStorage: gone when the tab closes).
 *
 * Typed by the contract (src/client/Wire.ts, types only: nothing of it is
 * bundled): a call must name a route the contract has and send the body that
 * route takes, and its answer is an `Answer` of the route's answer type whose
 * fields are read through the accessors below, which accept only the names
 * (and kinds) of fields the contract gives that answer. So a contract change
 * that breaks the console breaks `npm run typecheck`. The accessors still
 * check every value they read, as the answer crossed the network.
 */
import type { RouteOf, WireAnswer, WireBody, WireMethod } from "../../src/client/Wire.ts"

const TOKEN = "engram.session"

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

export const session = {
  token: () => sessionStorage.getItem(TOKEN),
  set: (token: string) => sessionStorage.setItem(TOKEN, token),
  clear: () => sessionStorage.removeItem(TOKEN)
}

/** The JSON of an answer whose contract type is `T`: read through the accessors, which check what they read. */
export class Answer<T> {
  declare readonly contract: T
  constructor(readonly json: unknown) {}
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The path of a route of the contract (a query string is allowed), or a message naming what is wrong. */
export type ApiPath<M extends WireMethod, P extends string> = [RouteOf<M, P>] extends [never] ? `no ${M} route of the contract matches ${P}` : P

/** The body argument: required when the route takes one, absent when it takes none. */
type BodyArgument<M extends WireMethod, P extends string> = [WireBody<M, P>] extends [never] ? [] : [body: WireBody<M, P>]

/** The code and message of an error envelope, if `json` is one. */
export const refusalOf = (json: unknown): { readonly code: string; readonly message: string } | undefined => {
  const error = isRecord(json) && isRecord(json.error) ? json.error : undefined
  return error === undefined ? undefined : { code: String(error.code ?? "error"), message: String(error.message ?? "") }
}

/** The answer of a call, or an ApiError carrying the envelope's code and message. */
export const api = async <M extends WireMethod, const P extends string>(
  method: M,
  path: ApiPath<M, P>,
  ...[body]: BodyArgument<M, P>
): Promise<Answer<WireAnswer<M, P>>> => {
  const token = session.token()
  const response = await fetch(path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  const json: unknown = text === "" ? null : JSON.parse(text)
  if (!response.ok) {
    const refusal = refusalOf(json)
    if (response.status === 401) session.clear()
    throw new ApiError(response.status, refusal?.code ?? "error", refusal?.message || `${method} ${path}: ${response.status}`)
  }
  return new Answer(json)
}

/** The names of `T`'s fields whose values (absent and null aside) are `V`; any name where `T` is a free-form record. */
type FieldsOf<T, V> = T extends ReadonlyArray<unknown> ? never
  : T extends object ? (string extends keyof T ? string : { [K in keyof T]-?: [Exclude<T[K], undefined | null>] extends [V] ? K : never }[keyof T] & string)
  : never

/** The type of field `K` of `T` (of whichever members of a union have it), absent and null removed. */
type FieldType<T, K extends string> = T extends unknown ? (K extends keyof T ? Exclude<T[K], undefined | null> : string extends keyof T ? unknown : never) : never

type Element<T> = T extends ReadonlyArray<infer E> ? E : unknown

const read = (value: Answer<unknown> | null | undefined, key: string): unknown => (value != null && isRecord(value.json) ? value.json[key] : undefined)

/** A string field of an answer ("" when absent or not a string). */
export const str = <T>(value: Answer<T> | null | undefined, key: FieldsOf<T, string>): string => {
  const found = read(value, key)
  return typeof found === "string" ? found : ""
}
/** A number field of an answer, or null when absent or not a number. */
export const numOrNull = <T>(value: Answer<T> | null | undefined, key: FieldsOf<T, number>): number | null => {
  const found = read(value, key)
  return typeof found === "number" ? found : null
}
/** A number field of an answer (0 when absent). */
export const num = <T>(value: Answer<T> | null | undefined, key: FieldsOf<T, number>): number => numOrNull(value, key) ?? 0
/** A boolean field of an answer: true only when it is true. */
export const bool = <T>(value: Answer<T> | null | undefined, key: FieldsOf<T, boolean>): boolean => read(value, key) === true
/** The object under `key` of an answer, if it is one. */
export const field = <T, K extends FieldsOf<T, object>>(value: Answer<T> | null | undefined, key: K): Answer<FieldType<T, K>> | undefined => {
  const found = read(value, key)
  return isRecord(found) ? new Answer(found) : undefined
}
/** The array under `key` of an answer, its elements as answers ([] when absent). */
export const list = <T, K extends FieldsOf<T, ReadonlyArray<unknown>>>(value: Answer<T> | null | undefined, key: K): ReadonlyArray<Answer<Element<FieldType<T, K>>>> => {
  const found = read(value, key)
  return Array.isArray(found) ? found.map((item) => new Answer(item)) : []
}
/** The elements of an answer that is an array. */
export const items = <T extends ReadonlyArray<unknown>>(value: Answer<T>): ReadonlyArray<Answer<Element<T>>> =>
  Array.isArray(value.json) ? value.json.map((item) => new Answer(item)) : []
/** Whether an answer carries field `key` with a value (neither absent nor null). */
export const has = <T>(value: Answer<T> | null | undefined, key: FieldsOf<T, unknown>): boolean => read(value, key) != null
/** The strings of an array field of an answer. */
export const strings = <T>(value: Answer<T> | null | undefined, key: FieldsOf<T, ReadonlyArray<string>>): ReadonlyArray<string> => {
  const found = read(value, key)
  return Array.isArray(found) ? found.filter((item): item is string => typeof item === "string") : []
}
/** `value` when it is one of `choices` (a form's select), else the first choice. */
export const choice = <const C extends string>(value: string, choices: readonly [C, ...Array<C>]): C =>
  choices.find((c) => c === value) ?? choices[0]
