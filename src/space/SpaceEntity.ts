/**
 * The Space entity: one per space in the whole cluster, living on whichever
 * runner owns the space's shard. It owns the space's index (loaded from the
 * store on first use, dropped when it passivates), its one write path, and
 * its background loops: draining queued writes, parsing uploaded documents,
 * consolidation, memory-model refreshes and webhook deliveries. PostgreSQL stays the
 * source of truth, so a moved or restarted entity rebuilds all of it.
 */
import { Entity } from "@effect/cluster"
import { Clock, Effect, Either, Layer, Metric, Queue, Schedule } from "effect"
import { spacesAwake, spaceWakeSeconds } from "../observability/Metrics.ts"
import { AppConfig, type AppConfigShape } from "../config/AppConfig.ts"
import { Consolidator } from "../consolidation/Consolidator.ts"
import { listItem, storedMemory } from "../domain/MemoryViews.ts"
import { parseSpaceEntityId, SpaceEntity, SpaceMissing, type WriteItem } from "../domain/SpaceProtocol.ts"
import type { ExtractionSettingsValues } from "../domain/ExtractionSettings.ts"
import { Extractor } from "../ingestion/Extractor.ts"
import { ExtractionSettings } from "../ingestion/ExtractionSettings.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { ReadPriority } from "../../services/EventLoop.ts"
import { ConsolidationRepo } from "../../services/store/ConsolidationRepo.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import { ModelRepo } from "../../services/store/ModelRepo.ts"
import { type OutboxEvent, WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { RuleRepo } from "../../services/store/RuleRepo.ts"
import { makeScreen } from "../security/Rules.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { WebhookSecrets } from "../../services/webhooks/Signing.ts"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { makeDelivery } from "./DeliveryLoop.ts"
import { Catalog } from "../../services/llm/Catalog.ts"
import { LanguageModels } from "../models/LanguageModels.ts"
import { ReasonSettings } from "../reason/ReasonSettings.ts"
import { SpaceProfiles } from "../reason/SpaceProfiles.ts"
import { makeRefresh } from "./RefreshLoop.ts"
import { makeConsolidation } from "./ConsolidationLoop.ts"
import { makeDrain } from "./DrainLoop.ts"
import { makeDocuments } from "./DocumentLoop.ts"
import { DocumentRepo } from "../../services/store/DocumentRepo.ts"
import { ExportRepo } from "../../services/store/ExportRepo.ts"
import { ImportRepo } from "../../services/store/ImportRepo.ts"
import { PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import { makePortability } from "../portability/PortabilityLoop.ts"
import { join } from "node:path"
import { SpaceClock, wallClock } from "./SpaceClock.ts"
import { makeSpaceEvents, SpaceEvent } from "./SpaceEvents.ts"
import { fillTexts, loadFromStore } from "./IndexLoad.ts"
import { makeIndexSnapshots } from "./IndexSnapshots.ts"
import { SnapshotStore } from "../../services/store/SnapshotStore.ts"
import { makeRecall } from "./SpaceRecall.ts"
import { KEEP_ALIVE_LINGER, makeKeepAlive } from "./KeepAlive.ts"
import { SpaceState } from "./SpaceState.ts"
import { containDefects, makeWriter } from "./SpaceWriter.ts"
import { backoff, supervise } from "./SupervisedLoop.ts"
import { makePreparation } from "./WritePreparation.ts"
import { ExtractionThread } from "../ingestion/WorkerExtraction.ts"

/** Operators (and tests) see spaces come and go: activations count up, the gauge follows the live ones. */
export const spaceActivations = Metric.counter("engram_space_activations", { description: "Space entities activated (index built from the store)" })
/** How often a space looks whether its index snapshot is due. */
const SNAPSHOT_CHECK = "5 seconds"
/** A snapshot is written once the space has had no change for this long ... */
const SNAPSHOT_QUIET_MS = 10_000
/** ... or its index has gone this long without one while changes kept coming. */
const SNAPSHOT_MAX_DIRTY_MS = 300_000
/** ... or two minutes, when a memory was removed or changed: its erased words leave the file well within five. */
const SNAPSHOT_ERASED_MAX_DIRTY_MS = 120_000

/** Where a woken space's index came from: its snapshot, or the store (none, damaged, or behind). */
export const spaceWakes = Metric.counter("engram_space_wakes", { description: "Space indexes built on activation, by source" })
export const spacesActive = spacesAwake

const makeSpace = (config: AppConfigShape) => Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const space = parseSpaceEntityId(address.entityId)
  const repo = yield* MemoryRepo
  const spaceRepo = yield* SpaceRepo
  const jobs = yield* JobRepo
  const extractor = yield* Extractor
  const thread = yield* ExtractionThread
  const extractionSettings = yield* ExtractionSettings
  const embedder = yield* Embedder
  const consolidator = yield* Consolidator
  const runs = yield* ConsolidationRepo
  const models = yield* ModelRepo
  const webhooks = yield* WebhookRepo
  const ledger = yield* LedgerRepo
  const clock = yield* SpaceClock
  yield* Effect.annotateCurrentSpan({ org_id: space.orgId, space_id: space.spaceId })

  yield* Metric.increment(spaceActivations)
  yield* Metric.incrementBy(spacesActive, 1)
  yield* Effect.addFinalizer(() =>
    Metric.incrementBy(spacesActive, -1).pipe(
      Effect.zipRight(Effect.logDebug("space passivated").pipe(Effect.annotateLogs({ space_id: space.spaceId })))
    ))

  // The space is checked and its index loaded on first use, not while the entity starts: a store that is
  // down then fails that call with a 503 and the next call tries again. A space that exists stays known to
  // exist (deletion goes through this entity); a missing one is checked again on every call, since
  // creating a space does not.
  const state = new SpaceState(space, { id: embedder.id, dimensions: embedder.dimensions, wordPart: embedder.wordPart, load: embedder.load }, embedder.wordVectors)
  // What happened in the space: the writer, the load and Wake publish, each loop below subscribes.
  const events = yield* makeSpaceEvents(space)
  const loading = yield* Effect.makeSemaphore(1)
  let loaded = false
  const load = Effect.gen(function*() {
    if (!(yield* spaceRepo.exists(space))) return yield* new SpaceMissing({ message: `space ${space.spaceId} not found` })
    const wakeStarted = yield* Clock.currentTimeMillis
    const restored = yield* snapshots.restore
    let source: "snapshot" | "store" = "snapshot"
    let count: number
    if (Either.isRight(restored)) {
      count = restored.right.memories
      writer.indexedAt(restored.right.storeVersion)
    } else {
      source = "store"
      if (restored.left !== "no snapshot") {
        yield* Effect.logInfo(`index snapshot not used (${restored.left}); rebuilding from the store`).pipe(
          Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId })
        )
      }
      // The version before the pages are read: a change made meanwhile makes it stale, never the index trusted.
      const version = yield* repo.storeVersion(space)
      count = yield* loadFromStore(repo, space, state)
      writer.indexedAt(version)
    }
    loaded = true
    yield* Metric.increment(Metric.tagged(spaceWakes, "source", source))
    yield* Metric.update(spaceWakeSeconds, ((yield* Clock.currentTimeMillis) - wakeStarted) / 1000)
    yield* Effect.annotateCurrentSpan({ source, memories: count })
    yield* Effect.logInfo(`space index loaded from the ${source}`).pipe(
      Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId, memories: count, source })
    )
    // The texts of a snapshot's memories follow from the store; writes wait for them, recalls do not.
    if (!state.complete) yield* Effect.forkIn(textsInBackground, entityScope)
    // Facts left pending (a restart, a moved shard, a failed run) are consolidated once things settle.
    for (const m of state.metas()) {
      if (m.type === "fact" && m.consolidatedAt === null && m.state === "active") {
        yield* events.publish(SpaceEvent.FactsChanged())
        break
      }
    }
    // Models left due for a refresh are scheduled as if their memories had just been recorded.
    yield* events.publish(SpaceEvent.Loaded())
  }).pipe(Effect.withSpan("Space.load", { attributes: { org_id: space.orgId, space_id: space.spaceId } }))
  const ensureLoaded = Effect.suspend(() =>
    loaded ? Effect.void : loading.withPermits(1)(Effect.suspend(() => (loaded ? Effect.void : load)))
  )
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
  /** Loaded, with every memory's texts: what every change of the space needs. */
  const ensureReady = ensureLoaded.pipe(Effect.zipRight(ensureTexts))
  const entityScope = yield* Effect.scope

  const priority = yield* ReadPriority
  const preparation = makePreparation({
    extractor,
    // Read from the store for every write call and queued group: a change made on any node applies to the next write.
    settings: extractionSettings.values(space.orgId, space.spaceId),
    embedder,
    extracting: yield* Effect.makeSemaphore(1),
    thread,
    beforeHeavyWrite: priority.beforeHeavyWrite
  })
  const writer = yield* makeWriter({
    space,
    state,
    repo,
    jobs,
    spaces: spaceRepo,
    consolidation: runs,
    models,
    webhooks,
    ledger,
    onDeliveriesQueued: events.publish(SpaceEvent.DeliveriesQueued()),
    clock,
    onFactsChanged: events.publish(SpaceEvent.FactsChanged()),
    onRecorded: events.publish(SpaceEvent.Recorded()),
    embedOne: preparation.embedOne,
    beforeHeavyWrite: priority.beforeHeavyWrite,
    unload: () => {
      loaded = false
    }
  })
  const snapshots = makeIndexSnapshots({
    space,
    state,
    store: yield* SnapshotStore,
    storeVersion: repo.storeVersion(space),
    holdingChanges: writer.holdingChanges,
    indexVersion: writer.indexVersion
  })
  const recall = makeRecall({ space, state, embedder, fromStore: (ids) => repo.findMany(space, ids) })
  const drain = yield* makeDrain({ space, jobs, writer, settings: preparation.settings, prepareGroup: preparation.prepareGroupWith })

  // One keep-alive for all the loops below, held while any of them works.
  const alive = yield* makeKeepAlive({ linger: KEEP_ALIVE_LINGER, keepAlive: Entity.keepAlive })
  const wake = yield* Queue.sliding<void>(1)
  // A space deleted meanwhile has nothing left to drain (its jobs went with it).
  const drainStep = ensureReady.pipe(
    Effect.zipRight(drain.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "drain", space, alive, signal: Queue.take(wake), step: drainStep })
  yield* events.on(["Queued", "Woken"], () => Queue.offer(wake, undefined))
  // Whatever was queued before this activation (a restart, a moved shard) is drained now.
  yield* Queue.offer(wake, undefined)

  if (config.consolidation) {
    const consolidation = yield* makeConsolidation({
      space,
      state,
      writer,
      consolidator,
      embedder,
      delay: config.consolidationDelay,
      clock,
      beforeHeavyWrite: priority.beforeHeavyWrite
    })
    yield* events.on(["FactsChanged"], () => consolidation.nudge)
    yield* events.on(["Woken"], () => consolidation.woken)
    const consolidateStep = ensureReady.pipe(
      Effect.zipRight(consolidation.step),
      Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
    )
    yield* supervise({ loop: "consolidate", space, alive, signal: consolidation.signal, step: consolidateStep })
  }

  const refresh = yield* makeRefresh({
    space,
    writer,
    recall,
    models,
    jobs,
    spaces: spaceRepo,
    catalog: yield* Catalog,
    languageModels: yield* LanguageModels,
    reasonSettings: yield* ReasonSettings,
    profiles: yield* SpaceProfiles,
    debounce: config.modelRefreshDebounce,
    ledger,
    clock
  })
  yield* events.on(["Recorded"], () => refresh.recorded)
  yield* events.on(["Woken"], () => refresh.woken)
  // Reading which models are due needs the store: retried, then logged (the next wake tries again).
  yield* events.on(["Loaded"], () => refresh.activated.pipe(Effect.retry(backoff.pipe(Schedule.compose(Schedule.recurs(5))))))
  const refreshStep = ensureReady.pipe(
    Effect.zipRight(refresh.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "refreshModel", space, alive, signal: refresh.signal, step: refreshStep })

  // Uploaded files: parsed and stored one at a time, behind the space's other writes.
  const documentLoop = yield* makeDocuments({
    space,
    jobs,
    documents: yield* DocumentRepo,
    writer,
    extractor,
    embedder,
    cachePath: join(config.modelsDir, "ocr"),
    beforeHeavyWrite: priority.beforeHeavyWrite,
    screen: makeScreen(yield* RuleRepo, webhooks).screenDocument
  })
  const documentStep = ensureReady.pipe(
    Effect.zipRight(documentLoop.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "documents", space, alive, signal: documentLoop.signal, step: documentStep })
  yield* events.on(["Woken"], () => documentLoop.nudge)
  yield* documentLoop.nudge

  // Exports and imports, one job at a time; an import's transaction is the writer's one change, then the index reloads.
  const portability = yield* makePortability({
    space,
    jobs: yield* PortabilityRepo,
    exports: yield* ExportRepo,
    imports: yield* ImportRepo,
    rules: yield* RuleRepo,
    webhooks,
    ledger,
    embedder,
    alone: writer.alone,
    reload: Effect.suspend(() => {
      state.clear()
      loaded = false
      return ensureLoaded
    }).pipe(Effect.catchTag("SpaceMissing", () => Effect.void))
  })
  const portabilityStep = ensureReady.pipe(
    Effect.zipRight(portability.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "portability", space, alive, signal: portability.signal, step: portabilityStep })
  yield* events.on(["Woken"], () => portability.nudge)
  yield* portability.nudge

  // Webhook deliveries need no index: they are rows of the store, sent and settled by this loop.
  const delivery = yield* makeDelivery({
    space,
    webhooks,
    transport: yield* WebhookTransport,
    secrets: yield* WebhookSecrets,
    schedule: config.webhookRetrySchedule,
    clock,
    quietFor: writer.quietFor
  })
  yield* events.on(["DeliveriesQueued", "Woken"], () => delivery.nudge)
  yield* supervise({ loop: "deliver", space, alive, signal: delivery.signal, step: delivery.step })
  // Whatever was due before this activation (a restart, a moved shard, a passivated space woken) is sent now.
  yield* delivery.nudge

  // The index snapshot: written once writes pause for a while (or have gone on for long), and when the entity stops.
  let dirtySince: number | null = null
  const snapshotStep = Effect.gen(function*() {
    if (!loaded || !snapshots.dirty()) {
      dirtySince = null
      return { more: false, lagMs: 0 }
    }
    const now = yield* wallClock.currentTimeMillis
    dirtySince ??= now
    const limit = snapshots.erased() ? SNAPSHOT_ERASED_MAX_DIRTY_MS : SNAPSHOT_MAX_DIRTY_MS
    if ((yield* writer.quietFor) < SNAPSHOT_QUIET_MS && now - dirtySince < limit) return { more: false, lagMs: 0 }
    const lagMs = now - dirtySince
    yield* snapshots.save
    dirtySince = null
    return { more: false, lagMs }
  })
  // On the wall clock, whatever clock the space's own timers run on (a test's): a snapshot is no event of the space.
  yield* supervise({ loop: "snapshot", space, alive, signal: Effect.sleep(SNAPSHOT_CHECK).pipe(Effect.withClock(wallClock)), step: snapshotStep })
  // Last: finalizers run in reverse, so this one runs while the loops can still finish a change in progress.
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => (loaded && snapshots.dirty() ? snapshots.save : Effect.void)).pipe(
      Effect.timeout("60 seconds"),
      Effect.tapErrorCause((cause) => Effect.logWarning("saving the index snapshot as the space stopped failed", cause)),
      Effect.ignore
    ))

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
    Delete: () => loading.withPermits(1)(writer.deleteSpace).pipe(Effect.tap(() => snapshots.forget), guarded)
  })
})

/**
 * Registered on the cluster with the configured idle time (SPACE_IDLE_SECONDS);
 * requests run concurrently (recall never queues behind a write), changes go
 * through the entity's one writer. It declares the services its spaces use;
 * a profile provides what they run on (the store, the models, the cluster).
 * Layers are memoized by reference within a build, so a service also
 * provided elsewhere (ReadPriority, shared with the HTTP layer) is one
 * instance.
 */
export const SpaceEntityLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    SpaceEntity.toLayer(makeSpace(config), { maxIdleTime: config.spaceIdleTime, concurrency: "unbounded" }))
).pipe(
  Layer.provide([
    ExtractionSettings.Default,
    ExtractionThread.layer(),
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
