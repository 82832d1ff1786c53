import { ApiError } from "../api.ts"
import { announce } from "../dom.ts"

/** Reports a failed call in the live region, with the API's own message. */
export const failed = (error: unknown) => announce(error instanceof ApiError ? `${error.message} (${error.code})` : String(error), "error")
