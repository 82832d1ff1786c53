/**
 * A space's settling timer, shared by its loops: after a change, fire once
 * no change has come for `delay`, or at the latest `maxWait` delays after the
 * first change not yet fired for (a steady stream still gets its turn). It
 * runs on the space's clock (SpaceClock), so a test can adjust it.
 */
import { type Clock, Duration, Effect } from "effect"

export const makeSettling = (options: {
  readonly clock: Clock.Clock
  readonly delay: Duration.Duration
  /** The longest wait under a steady stream, in delays. */
  readonly maxWait: number
  /** What firing does (signal the loop). */
  readonly settled: Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const { clock } = options
    const scope = yield* Effect.scope
    let lastChange = 0
    let firstChange: number | null = null
    let waiting = false

    const wait: Effect.Effect<void> = Effect.suspend(() => {
      const now = clock.unsafeCurrentTimeMillis()
      const delay = Duration.toMillis(options.delay)
      const left = Math.min(lastChange + delay - now, (firstChange ?? now) + options.maxWait * delay - now)
      if (left <= 0) {
        waiting = false
        firstChange = null
        return options.settled
      }
      return Effect.zipRight(clock.sleep(Duration.millis(left)), wait)
    })

    /** Waits for the last change seen to settle (at once if it has); not a change itself. */
    const settle = Effect.suspend(() => {
      if (waiting) return Effect.void
      waiting = true
      return Effect.forkIn(wait, scope).pipe(Effect.asVoid)
    })

    /** A change: the delay starts over. */
    const changed = Effect.suspend(() => {
      lastChange = clock.unsafeCurrentTimeMillis()
      firstChange ??= lastChange
      return settle
    })

    return { changed, settle }
  })
