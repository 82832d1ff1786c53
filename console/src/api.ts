/**
 * The console's client of Engram's own HTTP API, signed in with a session
 * token (kept in sessionStorage: gone when the tab closes). Every answer is
 * checked for the fields the console reads.
 */
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

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The JSON answer of a call, or an ApiError carrying the envelope's code and message. */
export const api = async (method: string, path: string, body?: unknown): Promise<unknown> => {
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
    const error = isRecord(json) && isRecord(json.error) ? json.error : {}
    if (response.status === 401) session.clear()
    throw new ApiError(response.status, String(error.code ?? "error"), String(error.message ?? `${method} ${path}: ${response.status}`))
  }
  return json
}

/** Reads a field of an answer as a string ("" when absent). */
export const str = (value: unknown, key: string): string => (isRecord(value) && typeof value[key] === "string" ? value[key] : "")
export const numOrNull = (value: unknown, key: string): number | null =>
  isRecord(value) && typeof value[key] === "number" ? value[key] : null
export const num = (value: unknown, key: string): number => (isRecord(value) && typeof value[key] === "number" ? value[key] : 0)
export const bool = (value: unknown, key: string): boolean => isRecord(value) && value[key] === true
/** The object under `key` of an answer, if it is one. */
export const field = (value: unknown, key: string): Record<string, unknown> | undefined =>
  isRecord(value) && isRecord(value[key]) ? value[key] : undefined
/** The array under `key` of an answer (or the answer itself when it is one). */
export const list = (value: unknown, key?: string): ReadonlyArray<unknown> => {
  const inner = key === undefined ? value : isRecord(value) ? value[key] : undefined
  return Array.isArray(inner) ? inner : []
}
export const strings = (value: unknown, key: string): ReadonlyArray<string> =>
  list(value, key).filter((item): item is string => typeof item === "string")
