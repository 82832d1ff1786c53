/**
 * The cluster's one waker: a singleton (it runs on exactly one runner, and
 * moves when that runner goes) that reads which spaces have work due in the
 * store and sends each a Wake: queued writes and refreshes, facts pending
 * consolidation since before the settling delay, and memory models that
 * refresh on new memories whose debounce has passed, and webhook deliveries
 * due for an attempt (or cut short by a crash). That is how a space whose entity
 * passivated, or whose runner died, still runs what is due: the entity is
 * activated wherever its shard now lives.
 */
import { Singleton } from "@effect/cluster"
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { ConsolidationRepo } from "../../services/store/ConsolidationRepo.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { ModelRepo } from "../../services/store/ModelRepo.ts"
import { WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { STUCK_AFTER } from "./DeliveryLoop.ts"

const sweep = Effect.gen(function*() {
  const config = yield* AppConfig
  const jobs = yield* JobRepo
  const runs = yield* ConsolidationRepo
  const models = yield* ModelRepo
  const webhooks = yield* WebhookRepo
  const entity = yield* SpaceEntity.client
  const now = yield* Clock.currentTimeMillis
  const queued = yield* jobs.spacesWithQueued
  const pending = config.consolidation
    ? yield* runs.spacesWithPending(new Date(now - Duration.toMillis(config.consolidationDelay)))
    : []
  const refreshes = yield* models.spacesWithDueRefreshes(new Date(now - Duration.toMillis(config.modelRefreshDebounce)))
  const deliveries = yield* webhooks.spacesWithDue(new Date(now), new Date(now - Duration.toMillis(STUCK_AFTER)))
  const due = new Map<string, SpaceRef>([...queued, ...pending, ...refreshes, ...deliveries].map((space) => [spaceEntityId(space), space]))
  yield* Effect.forEach(due.keys(), (id) => entity(id).Wake(undefined, { discard: true }), { concurrency: 8, discard: true })
  yield* Effect.annotateCurrentSpan({ queued: queued.length, pending: pending.length, refreshes: refreshes.length, deliveries: deliveries.length })
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
})).pipe(Layer.provide([JobRepo.Default, ModelRepo.Default, WebhookRepo.Default, ConsolidationRepo.Default]))
