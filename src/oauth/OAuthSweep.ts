/**
 * Housekeeping of the authorization server's rows: expired codes, expired
 * access and refresh tokens, and grants revoked or ended, deleted a day after
 * they stopped counting. Every node sweeps (each batch skips rows another
 * node holds), at start and then hourly; a failed step is logged and retried
 * with backoff, and the loop never dies quietly.
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { OAuthSweepRepo } from "../../services/store/OAuthSweepRepo.ts"
import { retried } from "../space/SupervisedLoop.ts"

/** How long a spent row is kept after it stopped counting (a code or token expired, a grant revoked or ended). */
export const SWEEP_GRACE = Duration.days(1)
export const SWEEP_INTERVAL = Duration.hours(1)
const BATCH = 500

export interface SweepStep {
  readonly codes: number
  readonly tokens: number
  readonly grants: number
  /** A batch came back full: there is more to delete right away. */
  readonly more: boolean
}

export class OAuthSweep extends Effect.Service<OAuthSweep>()("engram/oauth/OAuthSweep", {
  dependencies: [OAuthSweepRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* OAuthSweepRepo

    /** One batch of each kind, for rows that stopped counting before `now` minus the grace period. */
    const step = Effect.fn("OAuthSweep.step")(function*(now: Date, batch: number = BATCH) {
      const cutoff = new Date(now.getTime() - Duration.toMillis(SWEEP_GRACE))
      const codes = yield* repo.deleteExpiredCodes(cutoff, batch)
      const tokens = yield* repo.deleteExpiredTokens(cutoff, batch)
      const grants = yield* repo.deleteEndedGrants(cutoff, batch)
      yield* Effect.annotateCurrentSpan({ codes, tokens, grants })
      return { codes, tokens, grants, more: codes >= batch || tokens >= batch || grants >= batch } satisfies SweepStep
    })

    return { step, stepNow: Effect.flatMap(Clock.currentTimeMillis, (now) => step(new Date(now))) }
  })
}) {}

/**
 * Runs `step` now and then every `interval` (at once again while it reports
 * more), in the scope's own fiber. A failed step is logged at warning with its
 * cause and retried after an exponential backoff (200 ms doubling, at most 30 s).
 */
export const supervise = <E, R>(step: Effect.Effect<SweepStep, E, R>, interval: Duration.DurationInput) =>
  retried(step, "OAuth sweep step").pipe(
    Effect.tap(({ codes, grants, tokens }) =>
      codes + tokens + grants > 0 ? Effect.logDebug(`swept ${codes} codes, ${tokens} tokens and ${grants} grants`) : Effect.void),
    // At once again while there is more; otherwise after the interval.
    Effect.flatMap(({ more }) => (more ? Effect.void : Effect.sleep(interval))),
    Effect.forever,
    Effect.annotateLogs({ loop: "oauth-sweep" }),
    Effect.forkScoped,
    Effect.asVoid
  )

/** The sweep on this node. */
export const layer = (interval: Duration.DurationInput = SWEEP_INTERVAL) =>
  Layer.scopedDiscard(Effect.flatMap(OAuthSweep, (sweep) => supervise(sweep.stepNow, interval))).pipe(
    Layer.provide(OAuthSweep.Default)
  )
