/**
 * The inside of one Space entity, as a small graph of services built in the
 * entity's scope (one graph per activation, gone when it passivates):
 *
 * - `SpaceIdentity`: which space this is (from the entity's address).
 * - `SpaceHub`: what happened in the space (SpaceEvents), for the loops.
 * - `SpaceIndex`: the in-memory index, its change lock and version mark, its
 *   snapshots, and its load (on first use, from the snapshot or the store).
 * - `SpacePreparation`: extraction and embedding before a change is made.
 * - `SpaceWrites`: the one write path (SpaceWriter).
 * - `SpaceRecaller`: recall over the index.
 * - `SpaceAlive`: the keep-alive the loops share while they work.
 * - the loops (SpaceLoops.ts), each a scoped layer over the parts above.
 *
 * Each part declares what it needs; node-wide services (the store's
 * repositories, the models, the settings) come from the node. A test builds
 * the graph with any one part replaced (`spaceParts({ recall: Layer.succeed(...) })`).
 */
import { Entity, type Sharding } from "@effect/cluster"
import { Clock, Context, Effect, Either, Layer, Metric, SynchronizedRef } from "effect"
import { parseSpaceEntityId, SpaceMissing } from "../domain/SpaceProtocol.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import { Extractor } from "../ingestion/Extractor.ts"
import { ExtractionSettings } from "../ingestion/ExtractionSettings.ts"
import { ExtractionThread } from "../ingestion/WorkerExtraction.ts"
import { spaceWakeSeconds } from "../observability/Metrics.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { ReadPriority } from "../../services/EventLoop.ts"
import { ConsolidationRepo } from "../../services/store/ConsolidationRepo.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { ModelRepo } from "../../services/store/ModelRepo.ts"
import { SnapshotStore } from "../../services/store/SnapshotStore.ts"
import { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import { WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { fillTexts, loadFromStore } from "./IndexLoad.ts"
import { makeIndexMark } from "./IndexMark.ts"
import { makeIndexSnapshots } from "./IndexSnapshots.ts"
import { KEEP_ALIVE_LINGER, type KeepAliveShape, makeKeepAlive } from "./KeepAlive.ts"
import { SpaceClock } from "./SpaceClock.ts"
import { SpaceEvent, type SpaceEventsShape, makeSpaceEvents } from "./SpaceEvents.ts"
import { makeRecall } from "./SpaceRecall.ts"
import { SpaceState } from "./SpaceState.ts"
import { makeWriter, type SpaceWriter } from "./SpaceWriter.ts"
import { backoff, type LoopStep } from "./SupervisedLoop.ts"
import { makePreparation } from "./WritePreparation.ts"

/** Where a woken space's index came from: its snapshot, or the store (none, damaged, or behind). */
export const spaceWakes = Metric.counter("engram_space_wakes", { description: "Space indexes built on activation, by source" })

export class SpaceIdentity extends Context.Tag("engram/space/SpaceIdentity")<SpaceIdentity, SpaceRef>() {}

/** The space of the entity being activated, read from its address. */
export const SpaceIdentityLive = Layer.effect(SpaceIdentity, Effect.map(Entity.CurrentAddress, (address) => parseSpaceEntityId(address.entityId)))

export class SpaceHub extends Context.Tag("engram/space/SpaceHub")<SpaceHub, SpaceEventsShape>() {}

export const SpaceHubLive = Layer.scoped(SpaceHub, Effect.flatMap(SpaceIdentity, makeSpaceEvents))

const makeSpaceIndex = Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const events = yield* SpaceHub
  const repo = yield* MemoryRepo
  const spaceRepo = yield* SpaceRepo
  const embedder = yield* Embedder
  const priority = yield* ReadPriority
  const scope = yield* Effect.scope
  const annotations = { org_id: space.orgId, space_id: space.spaceId }

  const state = new SpaceState(space, { id: embedder.id, dimensions: embedder.dimensions, wordPart: embedder.wordPart, load: embedder.load }, embedder.wordVectors)
  const lock = yield* Effect.makeSemaphore(1)
  /** Runs `effect` while no change of the space can start or is under way (a snapshot reads the index whole). */
  const holdingChanges = <A, E, R>(effect: Effect.Effect<A, E, R>) => lock.withPermits(1)(effect)
  const mark = makeIndexMark()
  const snapshots = makeIndexSnapshots({
    space,
    state,
    store: yield* SnapshotStore,
    storeVersion: repo.storeVersion(space),
    holdingChanges,
    indexVersion: mark.version
  })

  // Texts missing after a wake from a snapshot: read once, by whichever needs them first.
  const filling = yield* Effect.makeSemaphore(1)
  const ensureTexts = Effect.suspend(() =>
    state.complete ? Effect.void : filling.withPermits(1)(Effect.suspend(() => (state.complete ? Effect.void : fillTexts(repo, space, state, priority.beforeHeavyWrite))))
  ).pipe(Effect.asVoid)
  const textsInBackground = ensureTexts.pipe(
    Effect.retry(backoff),
    Effect.tapErrorCause((cause) => Effect.logWarning("reading the texts of a woken space failed", cause)),
    Effect.ignore
  )

  /**
   * Checks that the space exists and fills the (empty) index from its
   * snapshot, or from the store when the snapshot is missing, damaged or
   * behind; then says so on the hub.
   */
  const load = Effect.gen(function*() {
    if (!(yield* spaceRepo.exists(space))) return yield* new SpaceMissing({ message: `space ${space.spaceId} not found` })
    const wakeStarted = yield* Clock.currentTimeMillis
    const restored = yield* snapshots.restore
    let source: "snapshot" | "store" = "snapshot"
    let count: number
    if (Either.isRight(restored)) {
      count = restored.right.memories
      mark.indexedAt(restored.right.storeVersion)
    } else {
      source = "store"
      if (restored.left !== "no snapshot") {
        yield* Effect.logInfo(`index snapshot not used (${restored.left}); rebuilding from the store`).pipe(Effect.annotateLogs(annotations))
      }
      // The version before the pages are read: a change made meanwhile makes it stale, never the index trusted.
      const version = yield* repo.storeVersion(space)
      count = yield* loadFromStore(repo, space, state)
      mark.indexedAt(version)
    }
    yield* Metric.increment(Metric.tagged(spaceWakes, "source", source))
    yield* Metric.update(spaceWakeSeconds, ((yield* Clock.currentTimeMillis) - wakeStarted) / 1000)
    yield* Effect.annotateCurrentSpan({ source, memories: count })
    yield* Effect.logInfo(`space index loaded from the ${source}`).pipe(Effect.annotateLogs({ ...annotations, memories: count, source }))
    // The texts of a snapshot's memories follow from the store; writes wait for them, recalls do not.
    if (!state.complete) yield* Effect.forkIn(textsInBackground, scope)
    // Facts left pending (a restart, a moved shard, a failed run) are consolidated once things settle.
    for (const m of state.metas()) {
      if (m.type === "fact" && m.consolidatedAt === null && m.state === "active") {
        yield* events.publish(SpaceEvent.FactsChanged())
        break
      }
    }
    // Models left due for a refresh are scheduled as if their memories had just been recorded.
    yield* events.publish(SpaceEvent.Loaded())
  }).pipe(Effect.withSpan("Space.load", { attributes: annotations }))

  // Whether the index is loaded, changed only while its lock is held: one load at a time, a failed
  // load leaves it unloaded (the next call tries again), and nothing else sees a load half done.
  const loaded = yield* SynchronizedRef.make(false)
  const loadOnce = SynchronizedRef.updateEffect(loaded, (done) => (done ? Effect.succeed(true) : Effect.as(load, true)))
  const ensureLoaded = Effect.flatMap(SynchronizedRef.get(loaded), (done) => (done ? Effect.void : loadOnce))
  /** Loaded, with every memory's texts: what every change of the space needs. */
  const ensureReady = Effect.zipRight(ensureLoaded, ensureTexts)
  /** Runs `effect` while no load can start or is under way; then the index is loaded as `loadedAfter` says. */
  const whileNoLoad = <A, E, R>(effect: Effect.Effect<A, E, R>, loadedAfter: (succeeded: boolean, wasLoaded: boolean) => boolean) =>
    SynchronizedRef.modifyEffect(loaded, (done) =>
      Effect.map(Effect.either(effect), (result) => [result, loadedAfter(Either.isRight(result), done)] as const)).pipe(Effect.flatten)

  return {
    state,
    mark,
    lock,
    snapshots,
    /** Whether the index is loaded now. */
    isLoaded: SynchronizedRef.get(loaded),
    ensureLoaded,
    ensureReady,
    /** A loop's step, run once the index is ready; a space deleted meanwhile has nothing left to do. */
    whenReady: <E, R>(step: Effect.Effect<LoopStep, E, R>) =>
      Effect.zipRight(ensureReady, step).pipe(Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))),
    /** The index is rebuilt from the store (after an import replaced the space's rows). */
    reload: whileNoLoad(Effect.zipRight(Effect.sync(() => state.clear()), load), (succeeded) => succeeded).pipe(
      Effect.catchTag("SpaceMissing", () => Effect.void)
    ),
    /** Runs `effect` (deleting the space) while no load can start or is under way; once it succeeds the index is unloaded. */
    unloading: <A, E, R>(effect: Effect.Effect<A, E, R>) => whileNoLoad(effect, (succeeded, wasLoaded) => !succeeded && wasLoaded)
  }
})

export class SpaceIndex extends Context.Tag("engram/space/SpaceIndex")<SpaceIndex, Effect.Effect.Success<typeof makeSpaceIndex>>() {}

export const SpaceIndexLive = Layer.scoped(SpaceIndex, makeSpaceIndex)

const makeSpacePreparation = Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const extractionSettings = yield* ExtractionSettings
  return makePreparation({
    extractor: yield* Extractor,
    // Read from the store for every write call and queued group: a change made on any node applies to the next write.
    settings: extractionSettings.values(space.orgId, space.spaceId),
    embedder: yield* Embedder,
    extracting: yield* Effect.makeSemaphore(1),
    thread: yield* ExtractionThread,
    beforeHeavyWrite: (yield* ReadPriority).beforeHeavyWrite
  })
})

export class SpacePreparation extends Context.Tag("engram/space/SpacePreparation")<SpacePreparation, Effect.Effect.Success<typeof makeSpacePreparation>>() {}

export const SpacePreparationLive = Layer.effect(SpacePreparation, makeSpacePreparation)

export class SpaceWrites extends Context.Tag("engram/space/SpaceWrites")<SpaceWrites, SpaceWriter>() {}

export const SpaceWritesLive = Layer.effect(
  SpaceWrites,
  Effect.gen(function*() {
    const index = yield* SpaceIndex
    const events = yield* SpaceHub
    return yield* makeWriter({
      space: yield* SpaceIdentity,
      state: index.state,
      lock: index.lock,
      mark: index.mark,
      repo: yield* MemoryRepo,
      jobs: yield* JobRepo,
      spaces: yield* SpaceRepo,
      consolidation: yield* ConsolidationRepo,
      models: yield* ModelRepo,
      webhooks: yield* WebhookRepo,
      ledger: yield* LedgerRepo,
      clock: yield* SpaceClock,
      onDeliveriesQueued: events.publish(SpaceEvent.DeliveriesQueued()),
      onFactsChanged: events.publish(SpaceEvent.FactsChanged()),
      onRecorded: events.publish(SpaceEvent.Recorded()),
      embedOne: (yield* SpacePreparation).embedOne,
      beforeHeavyWrite: (yield* ReadPriority).beforeHeavyWrite
    })
  })
)

const makeSpaceRecaller = Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const repo = yield* MemoryRepo
  return makeRecall({ space, state: (yield* SpaceIndex).state, embedder: yield* Embedder, fromStore: (ids) => repo.findMany(space, ids) })
})

export class SpaceRecaller extends Context.Tag("engram/space/SpaceRecaller")<SpaceRecaller, Effect.Effect.Success<typeof makeSpaceRecaller>>() {}

export const SpaceRecallerLive = Layer.effect(SpaceRecaller, makeSpaceRecaller)

/** One keep-alive for all the space's loops, held while any of them works. */
export class SpaceAlive extends Context.Tag("engram/space/SpaceAlive")<SpaceAlive, KeepAliveShape<never>>() {}

export const SpaceAliveLive = Layer.scoped(
  SpaceAlive,
  Effect.gen(function*() {
    // The cluster's keep-alive for this entity (its latch is in the activation's context).
    const context = yield* Effect.context<Sharding.Sharding | Entity.CurrentAddress>()
    return yield* makeKeepAlive({ linger: KEEP_ALIVE_LINGER, keepAlive: (enabled) => Effect.provide(Entity.keepAlive(enabled), context) })
  })
)
