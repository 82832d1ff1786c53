/**
 * A turn for pending I/O. Effect's scheduler runs ready fibers on microtasks,
 * ahead of sockets; PGlite and extraction also hold the event loop. Long
 * work yields here between chunks so other requests are not starved.
 */
import { Effect } from "effect"

export const yieldToIo = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})
