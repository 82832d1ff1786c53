/**
 * How every background loop of a space runs. A loop sleeps until it is
 * signalled, then runs its step until the step says there is nothing more to
 * do. Each step is a span; a failed step is logged at warning with the space
 * and the cause, counted, and retried with exponential backoff; the loop
 * never dies quietly and never leaves the space wedged. While it works it
 * holds the entity's shared keep-alive (so an idle timeout cannot cut a
 * drain short) and lets go of it when it stops, failed or interrupted.
 */
import { Cause, Duration, Effect, Metric, Schedule, type Scope } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import type { KeepAliveShape } from "./KeepAlive.ts"

export interface LoopStep {
  /** There is more to do right away. */
  readonly more: boolean
  /** How long the oldest work this step handled had waited, in milliseconds. */
  readonly lagMs: number
}

export const loopRuns = Metric.counter("engram_space_loop_runs", { description: "Steps a space loop completed" })
export const loopFailures = Metric.counter("engram_space_loop_failures", { description: "Steps a space loop failed (retried)" })
export const loopLag = Metric.gauge("engram_space_loop_lag_ms", { description: "Age of the oldest work a space loop last handled" })

/** 200 ms, doubling, at most 30 s; each delay jittered by a quarter either way so that many spaces do not retry in step. */
export const backoff = Schedule.exponential(Duration.millis(200)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(30))),
  Schedule.jitteredWith({ min: 0.75, max: 1.25 })
)

/**
 * Runs `step` again after each failure (any cause but an interruption,
 * defects included) on `backoff`, logging each at warning with its cause:
 * "`what` failed (n in a row); retrying in d" (d before its jitter).
 * `onFailure` runs first for each (a metric).
 */
export const retried = <A, E, R>(
  step: Effect.Effect<A, E, R>,
  what: string,
  onFailure: Effect.Effect<void> = Effect.void
): Effect.Effect<A, E, R> =>
  step.pipe(
    Effect.sandbox,
    Effect.retry({
      while: (cause) => !Cause.isInterruptedOnly(cause),
      schedule: Schedule.identity<Cause.Cause<E>>().pipe(
        Schedule.intersect(Schedule.intersect(backoff, Schedule.count)),
        Schedule.tapOutput(([cause, [[delay], failures]]) =>
          Effect.zipRight(
            onFailure,
            Effect.logWarning(`${what} failed (${failures + 1} in a row); retrying in ${Duration.format(Duration.min(delay, Duration.seconds(30)))}`, cause)
          ))
      )
    }),
    Effect.unsandbox
  )

export const supervise = <E, R, K>(options: {
  readonly loop: string
  readonly space: SpaceRef
  /** The entity's keep-alive, shared with its other loops. */
  readonly alive: KeepAliveShape<K>
  /** Waits for the next signal to work. */
  readonly signal: Effect.Effect<void>
  readonly step: Effect.Effect<LoopStep, E, R>
}): Effect.Effect<void, never, R | K | Scope.Scope> => {
  const { loop, space } = options
  const runs = Metric.tagged(loopRuns, "loop", loop)
  const failed = Metric.tagged(loopFailures, "loop", loop)
  const lag = Metric.tagged(loopLag, "loop", loop)
  const annotations = { loop, org_id: space.orgId, space_id: space.spaceId }

  const step = options.step.pipe(Effect.withSpan(`Space.${loop}`, { attributes: annotations }))

  // Steps until one says there is no more; a failed one is retried on the backoff (the count starts again after a success).
  const steps = retried(step, `space ${loop} step`, Metric.increment(failed)).pipe(
    Effect.tap((done) => Effect.zipRight(Metric.increment(runs), Metric.set(lag, done.lagMs))),
    Effect.repeat({ while: (done) => done.more })
  )
  const work = Effect.acquireUseRelease(options.alive.acquire, () => steps, () => options.alive.release)

  // A failure outside a step (keeping the entity alive needs the store too) is logged, and the work restarts.
  const guarded = work.pipe(
    Effect.sandbox,
    Effect.tapError((cause) =>
      Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logWarning(`space ${loop} loop failed; it restarts`, cause)
    ),
    Effect.retry({ while: (cause) => !Cause.isInterruptedOnly(cause), schedule: Schedule.spaced(Duration.seconds(1)) }),
    Effect.unsandbox
  )

  return options.signal.pipe(
    Effect.zipRight(guarded),
    Effect.forever,
    Effect.annotateLogs(annotations),
    Effect.forkScoped,
    Effect.asVoid
  )
}
