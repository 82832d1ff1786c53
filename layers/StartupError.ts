import { Data } from "effect"

/** Why the service refused to start, in words an operator can act on. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}
