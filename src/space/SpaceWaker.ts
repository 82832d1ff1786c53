/**
 * The cluster's one waker: a singleton (it runs on exactly one runner, and
 * moves when that runner goes) that reads which spaces have work due in the
 * store and sends each a Wake. That is how a space whose entity passivated,
 * or whose runner died, still runs its queued writes: the entity is
 * activated wherever its shard now lives, and drains.
 */
import { Singleton } from "@effect/cluster"
import { Duration, Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"

const sweep = Effect.gen(function*() {
  const jobs = yield* JobRepo
  const entity = yield* SpaceEntity.client
  const due = yield* jobs.spacesWithQueued
  yield* Effect.forEach(due, (space) => entity(spaceEntityId(space)).Wake(undefined, { discard: true }), {
    concurrency: 8,
    discard: true
  })
  yield* Effect.annotateCurrentSpan({ spaces: due.length })
}).pipe(Effect.withSpan("SpaceWaker.sweep"))

export const SpaceWaker = Layer.unwrapEffect(Effect.gen(function*() {
  const { wakeInterval } = yield* AppConfig
  return Singleton.make(
    "engram/SpaceWaker",
    sweep.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("waking spaces with due work failed; trying again next round", cause)),
      Effect.repeat(Schedule.spaced(wakeInterval)),
      Effect.asVoid
    )
  )
}))

export const DEFAULT_WAKE_INTERVAL = Duration.seconds(5)
