/**
 * The Space entity: one per space in the whole cluster, living on whichever
 * runner owns the space's shard. It owns the space's index (loaded from the
 * store on first use, dropped when it passivates), its one write path, and
 * its background loops: draining queued writes, parsing uploaded documents,
 * consolidation, memory-model refreshes and webhook deliveries. PostgreSQL stays the
 * source of truth, so a moved or restarted entity rebuilds all of it.
 *
 * Each activation builds the space's parts (SpaceParts.ts) and loops
 * (SpaceLoops.ts) as one graph of layers in the entity's scope; the calls
 * below are answered by those parts.
 */
import { Context, Effect, Layer, Metric } from "effect"
import { spacesAwake } from "../observability/Metrics.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { listItem, storedMemory } from "../domain/MemoryViews.ts"
import { SpaceEntity, type WriteItem } from "../domain/SpaceProtocol.ts"
import type { ExtractionSettingsValues } from "../domain/ExtractionSettings.ts"
import { ExtractionSettings } from "../ingestion/ExtractionSettings.ts"
import { ExtractionThread } from "../ingestion/WorkerExtraction.ts"
import { ParseThread } from "../documents/WorkerParser.ts"
import { ReadPriority } from "../../services/EventLoop.ts"
import { ConsolidationRepo } from "../../services/store/ConsolidationRepo.ts"
import { DocumentRepo } from "../../services/store/DocumentRepo.ts"
import { ExportRepo } from "../../services/store/ExportRepo.ts"
import { ImportRepo } from "../../services/store/ImportRepo.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { ModelRepo } from "../../services/store/ModelRepo.ts"
import { PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import { RuleRepo } from "../../services/store/RuleRepo.ts"
import { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import { type OutboxEvent, WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { ReasonSettings } from "../reason/ReasonSettings.ts"
import { SpaceProfiles } from "../reason/SpaceProfiles.ts"
import { SpaceEvent } from "./SpaceEvents.ts"
import { SpaceLoops } from "./SpaceLoops.ts"
import {
  SpaceAliveLive,
  SpaceHub,
  SpaceHubLive,
  SpaceIdentity,
  SpaceIdentityLive,
  SpaceIndex,
  SpaceIndexLive,
  SpacePreparation,
  SpacePreparationLive,
  SpaceRecaller,
  SpaceRecallerLive,
  SpaceWrites,
  SpaceWritesLive
} from "./SpaceParts.ts"
import { containDefects } from "./SpaceWriter.ts"

export { spaceWakes } from "./SpaceParts.ts"

/** Operators (and tests) see spaces come and go: activations count up, the gauge follows the live ones. */
export const spaceActivations = Metric.counter("engram_space_activations", { description: "Space entities activated (index built from the store)" })
export const spacesActive = spacesAwake

/** The parts a space is built from, each a layer; `spaceParts` takes any of them replaced. */
export const defaultSpaceParts = {
  identity: SpaceIdentityLive,
  hub: SpaceHubLive,
  index: SpaceIndexLive,
  preparation: SpacePreparationLive,
  writer: SpaceWritesLive,
  recall: SpaceRecallerLive,
  alive: SpaceAliveLive,
  loops: SpaceLoops
}

export type SpacePartLayers = typeof defaultSpaceParts

/** The graph of one space's parts, with `replace`'s in place of the defaults (a test's `Layer.succeed`, or `Layer.empty` for the loops). */
export const spaceParts = (replace: Partial<SpacePartLayers> = {}) => {
  const parts = { ...defaultSpaceParts, ...replace }
  return parts.loops.pipe(
    Layer.provideMerge(Layer.mergeAll(parts.writer, parts.recall, parts.alive)),
    Layer.provideMerge(parts.preparation),
    Layer.provideMerge(parts.index),
    Layer.provideMerge(parts.hub),
    Layer.provideMerge(parts.identity)
  )
}

/** The calls of the entity, answered by the space's parts. */
const handlers = Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const writer = yield* SpaceWrites
  const preparation = yield* SpacePreparation
  const recall = yield* SpaceRecaller
  const events = yield* SpaceHub
  const jobs = yield* JobRepo
  const webhooks = yield* WebhookRepo
  const priority = yield* ReadPriority
  const { ensureLoaded, ensureReady } = index

  const write = (item: WriteItem, settings: ExtractionSettingsValues, events: ReadonlyArray<OutboxEvent>) =>
    Effect.gen(function*() {
      const prepared = yield* preparation.prepare(item, settings)
      const memories = yield* writer.write(prepared, events)
      return { documentId: prepared.document.documentId, memories: memories.map(storedMemory) }
    })

  const guarded = containDefects("a call to the space", space)

  return SpaceEntity.of({
    Write: ({ payload }) =>
      ensureReady.pipe(
        Effect.zipRight(preparation.settings),
        // The events handed over with the write are queued in its first item's transaction.
        Effect.flatMap((settings) => Effect.forEach(payload.items, (item, i) => write(item, settings, i === 0 ? payload.events : []))),
        guarded
      ),
    Recall: ({ payload }) => ensureLoaded.pipe(Effect.zipRight(recall(payload)), priority.read, guarded),
    Edit: ({ payload }) => ensureReady.pipe(Effect.zipRight(writer.edit(payload)), Effect.map(listItem), guarded),
    Forget: ({ payload }) => ensureReady.pipe(Effect.zipRight(writer.forget(payload.memoryId)), guarded),
    DeleteDocument: ({ payload }) => ensureReady.pipe(Effect.zipRight(writer.deleteDocument(payload.documentId)), guarded),
    Enqueue: ({ payload }) => {
      const receivedAt = new Date(payload.receivedAt)
      const report = payload.events.length === 0 ? Effect.void : webhooks.enqueue(space, payload.events, receivedAt)
      return jobs.create(space, payload.jobId, payload.items, receivedAt, new Map(payload.refused), report).pipe(
        Effect.zipRight(events.publish(SpaceEvent.Queued())),
        Effect.zipRight(payload.events.length === 0 ? Effect.void : events.publish(SpaceEvent.DeliveriesQueued())),
        Effect.withSpan("Space.enqueue", {
          attributes: { org_id: space.orgId, space_id: space.spaceId, job_id: payload.jobId, items: payload.items.length }
        }),
        guarded
      )
    },
    Wake: () => events.publish(SpaceEvent.Woken()),
    // Not while the index is loading: a load finishing after the delete would bring the deleted memories back.
    Delete: () => index.unloading(writer.deleteSpace).pipe(Effect.tap(() => index.snapshots.forget), guarded)
  })
})

/**
 * The Space entity with its parts built from `parts` (spaceParts()), for
 * each activation in the activation's scope: the parts live as long as the
 * entity, and their finalizers run as it passivates.
 */
export const spaceEntity = <E, R>(parts: Layer.Layer<SpaceIdentity | SpaceHub | SpaceIndex | SpacePreparation | SpaceWrites | SpaceRecaller, E, R>) =>
  Layer.unwrapEffect(
    Effect.map(AppConfig, (config) =>
      SpaceEntity.toLayer(
        Effect.gen(function*() {
          yield* Metric.increment(spaceActivations)
          yield* Metric.incrementBy(spacesActive, 1)
          const context = yield* Layer.build(parts).pipe(Effect.orDie)
          const space = Context.get(context, SpaceIdentity)
          yield* Effect.annotateCurrentSpan({ org_id: space.orgId, space_id: space.spaceId })
          yield* Effect.addFinalizer(() =>
            Metric.incrementBy(spacesActive, -1).pipe(
              Effect.zipRight(Effect.logDebug("space passivated").pipe(Effect.annotateLogs({ space_id: space.spaceId })))
            ))
          return yield* Effect.provide(handlers, context)
        }),
        { maxIdleTime: config.spaceIdleTime, concurrency: "unbounded" }
      ))
  )

/**
 * Registered on the cluster with the configured idle time (SPACE_IDLE_SECONDS);
 * requests run concurrently (recall never queues behind a write), changes go
 * through the entity's one writer. It declares the services its spaces use;
 * a profile provides what they run on (the store, the models, the cluster).
 * Layers are memoized by reference within a build, so a service also
 * provided elsewhere (ReadPriority, shared with the HTTP layer) is one
 * instance.
 */
export const spaceEntityLive = (replace: Partial<SpacePartLayers> = {}) =>
  spaceEntity(spaceParts(replace)).pipe(
    Layer.provide([
      ExtractionSettings.Default,
      ExtractionThread.layer(),
      ParseThread.layer(),
      MemoryRepo.Default,
      JobRepo.Default,
      SpaceRepo.Default,
      ConsolidationRepo.Default,
      ModelRepo.Default,
      WebhookRepo.Default,
      RuleRepo.Default,
      DocumentRepo.Default,
      PortabilityRepo.Default,
      ExportRepo.Default,
      ImportRepo.Default,
      LedgerRepo.Default,
      ReasonSettings.Default,
      SpaceProfiles.Default,
      ReadPriority.Default
    ])
  )

export const SpaceEntityLive = spaceEntityLive()
