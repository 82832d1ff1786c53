/**
 * The repository boundary: a store that cannot be reached becomes a typed
 * `ServiceUnavailable` (503); any other SQL failure is a bug and becomes a defect.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { ServiceUnavailable } from "../../src/domain/Errors.ts"

const pgCode = (error: SqlError): string | undefined => {
  const cause = error.cause as { code?: unknown } | undefined
  return typeof cause?.code === "string" ? cause.code : undefined
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "57P01", "57P02", "57P03"])

export const isUnreachable = (error: SqlError) => {
  const code = pgCode(error)
  if (code !== undefined) return CONNECTION_CODES.has(code) || code.startsWith("08")
  return /connect|terminat|timeout|closed/i.test(String((error.cause as Error | undefined)?.message ?? error.message))
}

export const isUniqueViolation = (error: SqlError) => pgCode(error) === "23505"

export const storeFailure = <A, E, R>(
  self: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  Effect.catchIf(self, (e): e is SqlError => (e as { _tag?: unknown })?._tag === "SqlError", (error) =>
    isUnreachable(error)
      ? Effect.logError("store unreachable", error.message).pipe(
        Effect.zipRight(new ServiceUnavailable({ message: "the store is unavailable; try again shortly" }))
      )
      : Effect.die(error))

export const iso = (value: Date | string): string => new Date(value).toISOString()
export const isoOrNull = (value: Date | string | null): string | null => value === null ? null : iso(value)
