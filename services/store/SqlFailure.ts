/**
 * The repository boundary: a store that cannot be reached, or that cancelled
 * a statement no one here asked it to, becomes a typed `ServiceUnavailable`
 * (503); any other SQL failure is a bug and becomes a defect.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { ServiceUnavailable } from "../../src/domain/Errors.ts"

/** What the drivers put on their errors: a SQLSTATE or a socket error code, and a message. */
const DriverError = Schema.Struct({ code: Schema.optional(Schema.String), message: Schema.optional(Schema.String) })
const readDriverError = Schema.decodeUnknownOption(DriverError)

const pgCode = (error: SqlError): string | undefined =>
  Option.getOrUndefined(Option.flatMapNullable(readDriverError(error.cause), (cause) => cause.code))

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "57P01", "57P02", "57P03"])

export const isUnreachable = (error: SqlError) => {
  const code = pgCode(error)
  if (code !== undefined) return CONNECTION_CODES.has(code) || code.startsWith("08")
  const message = Option.getOrUndefined(Option.flatMapNullable(readDriverError(error.cause), (cause) => cause.message))
  return /connect|terminat|timeout|closed/i.test(message ?? error.message)
}

/**
 * PostgreSQL cancelled the statement (57014). Nothing here cancels a
 * statement that is still wanted: the driver's cancel of an interrupted
 * fiber's statement, which could land on the next request's, is not sent by
 * the server profile's pool (`layerPostgres`); an operator's
 * `pg_cancel_backend` or a server-side timeout can still cancel one.
 * Transient: the same call succeeds when tried again.
 */
export const isCancelled = (error: SqlError) => pgCode(error) === "57014"

export const isUniqueViolation = (error: SqlError) => pgCode(error) === "23505"

export const isForeignKeyViolation = (error: SqlError) => pgCode(error) === "23503"

export const storeFailure = <A, E, R>(
  self: Effect.Effect<A, E | SqlError, R>
): Effect.Effect<A, Exclude<E, SqlError> | ServiceUnavailable, R> =>
  Effect.catchIf(self, (e): e is SqlError => e instanceof SqlError, (error) =>
    isUnreachable(error)
      ? Effect.logError("store unreachable", error.message).pipe(
        Effect.zipRight(new ServiceUnavailable({ message: "the store is unavailable; try again shortly" }))
      )
      : isCancelled(error)
      ? Effect.logWarning("the store cancelled a statement", error.message).pipe(
        Effect.zipRight(new ServiceUnavailable({ message: "the store cancelled the statement; try again" }))
      )
      : Effect.die(error))
