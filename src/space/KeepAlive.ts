/**
 * The Space entity's keep-alive, shared by its loops. A keep-alive is a
 * persisted cluster message (a row written, answered and marked processed),
 * and the entity has one latch for it: each loop asking on its own cost
 * every write about three of those messages (a wake starts several loops,
 * each for one short step), and the first loop to stop opened the latch
 * for all of them, so the entity could be passivated under a loop still
 * working. Here the first loop to start work sends the keep-alive, the
 * others only count themselves in, and the latch opens `linger` after the
 * last one stops, so a stream of writes holds one keep-alive throughout:
 * Effect's `RcRef` with an idle time to live, not a count of our own.
 */
import { Duration, Effect, Exit, RcRef, Scope } from "effect"

export interface KeepAliveShape<R> {
  /** A loop starts work: the entity is kept alive until the matching `release`. */
  readonly acquire: Effect.Effect<void, never, R>
  /** A loop stopped work: once none works, the keep-alive ends after the linger. */
  readonly release: Effect.Effect<void, never, R>
  /** Whether the keep-alive is held now (tests, traces). */
  readonly held: () => boolean
}

/**
 * The keep-alive of the entity being built: `keepAlive` is the cluster's own
 * call (`Entity.keepAlive`), or a test's. It is an `RcRef` whose resource is
 * the keep-alive itself (sent when the first loop takes it, ended when the
 * reference count has been zero for `linger`); each `acquire` takes it in a
 * scope of its own, which the matching `release` closes. Its latch is opened
 * when the entity's scope closes.
 */
export const makeKeepAlive = <R>(options: {
  readonly linger: Duration.DurationInput
  readonly keepAlive: (enabled: boolean) => Effect.Effect<void, never, R>
}): Effect.Effect<KeepAliveShape<R>, never, Scope.Scope | R> =>
  Effect.gen(function*() {
    const { keepAlive } = options
    let held = false
    // Sent only once it succeeded is the keep-alive held: one the store refused is asked for again by the next loop.
    const ref = yield* RcRef.make({
      acquire: Effect.acquireRelease(
        Effect.tap(Effect.suspend(() => keepAlive(true)), () => (held = true)),
        () => Effect.suspend(() => (held ? Effect.tap(keepAlive(false), () => (held = false)) : Effect.void))
      ),
      idleTimeToLive: options.linger
    })
    /** The scopes of the loops working now, each holding the reference once. */
    const holders: Array<Scope.CloseableScope> = []

    const acquire = Effect.uninterruptible(Effect.gen(function*() {
      const scope = yield* Scope.make()
      const exit = yield* Effect.exit(Scope.extend(RcRef.get(ref), scope))
      if (Exit.isFailure(exit)) {
        yield* Scope.close(scope, Exit.void)
        return yield* exit
      }
      holders.push(scope)
    }))

    const release = Effect.uninterruptible(Effect.suspend(() => {
      const scope = holders.pop()
      return scope === undefined ? Effect.void : Scope.close(scope, Exit.void)
    }))

    return { acquire, release, held: () => held }
  })

/** After its last loop stops, a space stays kept alive this long: the next write of a stream finds it held. */
export const KEEP_ALIVE_LINGER = Duration.seconds(1)
