/**
 * The Space entity's keep-alive, shared by its loops. A keep-alive is a
 * persisted cluster message (a row written, answered and marked processed),
 * and the entity has one latch for it: each loop asking on its own cost
 * every write about three of those messages (a wake starts several loops,
 * each for one short step), and the first loop to stop opened the latch
 * for all of them, so the entity could be passivated under a loop still
 * working. Here the first loop to start work sends the keep-alive, the
 * others only count themselves in, and the latch opens `linger` after the
 * last one stops, so a stream of writes holds one keep-alive throughout.
 */
import { Duration, Effect, Fiber, type Scope } from "effect"

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
 * call (`Entity.keepAlive`), or a test's. Its latch is opened when the scope closes.
 */
export const makeKeepAlive = <R>(options: {
  readonly linger: Duration.DurationInput
  readonly keepAlive: (enabled: boolean) => Effect.Effect<void, never, R>
}): Effect.Effect<KeepAliveShape<R>, never, Scope.Scope | R> =>
  Effect.gen(function*() {
    const { keepAlive } = options
    const lock = yield* Effect.makeSemaphore(1)
    const scope = yield* Effect.scope
    let holders = 0
    let held = false
    let lingering: Fiber.RuntimeFiber<void> | undefined

    const letGo = lock.withPermits(1)(Effect.uninterruptible(Effect.suspend(() => {
      lingering = undefined
      if (holders > 0 || !held) return Effect.void
      held = false
      return keepAlive(false)
    })))

    // Sent only after it succeeded is the loop counted: a keep-alive the store refused is asked for again.
    const acquire = lock.withPermits(1)(Effect.uninterruptible(Effect.gen(function*() {
      if (lingering !== undefined) {
        const pending = lingering
        lingering = undefined
        yield* Fiber.interrupt(pending)
      }
      if (!held) {
        yield* keepAlive(true)
        held = true
      }
      holders++
    })))

    const release = lock.withPermits(1)(Effect.uninterruptible(Effect.gen(function*() {
      holders = Math.max(0, holders - 1)
      if (holders > 0 || !held || lingering !== undefined) return
      // Forked from this uninterruptible section, the fiber would be uninterruptible too: the next `acquire` must stop it.
      lingering = yield* Effect.forkIn(Effect.interruptible(Effect.sleep(options.linger).pipe(Effect.zipRight(letGo))), scope)
    })))

    yield* Effect.addFinalizer(() => Effect.suspend(() => (held ? keepAlive(false).pipe(Effect.tap(() => (held = false))) : Effect.void)))

    return { acquire, release, held: () => held }
  })

/** After its last loop stops, a space stays kept alive this long: the next write of a stream finds it held. */
export const KEEP_ALIVE_LINGER = Duration.seconds(1)
