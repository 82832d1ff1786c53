import { FiberRef } from "effect"

/** The X-Request-ID of the request being served; receipts are stored under it. */
export const CurrentRequestId = FiberRef.unsafeMake<string>("")
