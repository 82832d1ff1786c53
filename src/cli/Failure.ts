/**
 * Start-up and command failures reach the operator as one clear line on
 * stderr and exit code 1. The failure is passed on once reported, so the
 * runtime ends the process with that code: a connection or timer a failed
 * start left behind (a client still retrying, say) never keeps it running.
 */
import { ValidationError } from "@effect/cli"
import { Cause, Effect } from "effect"

const describe = (failure: unknown): string => {
  if (typeof failure === "string") return failure
  // @effect/cli already printed the usage error (a bad option value, a missing argument).
  if (ValidationError.isValidationError(failure)) return ""
  if (typeof failure === "object" && failure !== null) {
    const { _tag, message } = failure as { _tag?: string; message?: unknown }
    if (_tag === "ConfigError" || _tag === "And" || _tag === "Or" || _tag === "InvalidData" || _tag === "MissingData") {
      return `invalid configuration: ${String(failure)}`
    }
    if (typeof message === "string" && message !== "") return message
  }
  return String(failure)
}

export const reportFailure = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchAllCause(self, (cause) =>
    Effect.gen(function*() {
      if (Cause.isInterruptedOnly(cause)) return
      const failure = Cause.squash(cause)
      const text = describe(failure)
      if (text !== "") process.stderr.write(`engram: ${text}\n`)
      if (!Cause.isFailure(cause)) process.stderr.write(`${Cause.pretty(cause)}\n`)
      process.exitCode = 1
      return yield* Effect.failCause(cause)
    }))
