/**
 * Scheduling on the one event loop a node has. Effect's scheduler runs ready
 * fibers on microtasks, ahead of sockets, and PGlite and extraction hold the
 * loop while they run; long or heavy work yields here so recalls are not
 * starved by writes.
 */
import { Duration, Effect } from "effect"

/** A turn for pending I/O. */
export const yieldToIo = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

/** How long heavy write work waits for recalls in progress before it goes ahead anyway. */
export const READ_PRIORITY_LIMIT = Duration.millis(50)

/**
 * Recalls before heavy writes: a recall marks itself in progress; the heavy
 * step of a write (an extraction, a store transaction) waits until no recall
 * has been in progress for a whole turn of the event loop (recalls queued on
 * sockets are read in that turn, before it ends), at most
 * READ_PRIORITY_LIMIT, then takes a turn of its own. A steady stream of
 * recalls slows writes; it never stops them.
 */
export class ReadPriority extends Effect.Service<ReadPriority>()("engram/EventLoop/ReadPriority", {
  sync: () => {
    let reading = 0
    let waiters: Array<() => void> = []
    const release = () => {
      const ready = waiters
      waiters = []
      for (const resume of ready) resume()
    }
    const idle = Effect.async<void>((resume) => {
      if (reading === 0) return resume(Effect.void)
      const waiter = () => resume(Effect.void)
      waiters.push(waiter)
      return Effect.sync(() => {
        waiters = waiters.filter((w) => w !== waiter)
      })
    })
    return {
      /** Runs a recall, marked in progress. */
      read: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        Effect.acquireUseRelease(
          Effect.sync(() => reading++),
          () => effect,
          () =>
            Effect.sync(() => {
              reading--
              if (reading === 0) setImmediate(() => reading === 0 && release())
            })
        ),
      /** Before a heavy write step: let recalls in progress finish (at most READ_PRIORITY_LIMIT), then a turn of its own. */
      beforeHeavyWrite: idle.pipe(Effect.timeoutOption(READ_PRIORITY_LIMIT), Effect.zipRight(yieldToIo))
    }
  }
}) {}
