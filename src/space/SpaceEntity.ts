/**
 * The Space entity: one per space in the whole cluster, living on whichever
 * runner owns the space's shard. It owns the space's index (loaded from the
 * store on first use, dropped when it passivates), its one write path, and
 * its background loops: draining queued writes, parsing uploaded documents,
 * consolidation, memory-model refreshes and webhook deliveries. PostgreSQL stays the
 * source of truth, so a moved or restarted entity rebuilds all of it.
 */
import { Entity } from "@effect/cluster"
import { Effect, Layer, Metric, Queue } from "effect"
import { AppConfig, type AppConfigShape } from "../config/AppConfig.ts"
import { Consolidator } from "../consolidation/Consolidator.ts"
import { listItem, storedMemory } from "../domain/MemoryViews.ts"
import { parseSpaceEntityId, SpaceEntity, SpaceMissing, type WriteItem } from "../domain/SpaceProtocol.ts"
import type { ExtractionSettingsValues } from "../domain/ExtractionSettings.ts"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import { Extractor } from "../ingestion/Extractor.ts"
import { ExtractionSettings } from "../ingestion/ExtractionSettings.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { ReadPriority, yieldToIo } from "../../services/EventLoop.ts"
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
import { SpaceClock } from "./SpaceClock.ts"
import { makeRecall } from "./SpaceRecall.ts"
import { KEEP_ALIVE_LINGER, makeKeepAlive } from "./KeepAlive.ts"
import { SpaceState } from "./SpaceState.ts"
import { containDefects, makeWriter } from "./SpaceWriter.ts"
import { supervise } from "./SupervisedLoop.ts"
import { makePreparation } from "./WritePreparation.ts"
import { ExtractionThread } from "../ingestion/WorkerExtraction.ts"

/** Operators (and tests) see spaces come and go: activations count up, the gauge follows the live ones. */
export const spaceActivations = Metric.counter("engram_space_activations", { description: "Space entities activated (index built from the store)" })
export const spacesActive = Metric.gauge("engram_spaces_active", { description: "Space entities currently holding their index in memory" })

/** Memories put in the index between turns for pending I/O while a large space loads. */
const LOAD_CHUNK = 2000

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
  const state = new SpaceState(embedder.id, embedder.wordVectors)
  const loading = yield* Effect.makeSemaphore(1)
  let loaded = false
  const load = Effect.gen(function*() {
    if (!(yield* spaceRepo.exists(space))) return yield* new SpaceMissing({ message: `space ${space.spaceId} not found` })
    const memories = yield* repo.loadSpace(space)
    for (let i = 0; i < memories.length; i += LOAD_CHUNK) {
      for (const memory of memories.slice(i, i + LOAD_CHUNK)) state.put(memory)
      if (i + LOAD_CHUNK < memories.length) yield* yieldToIo
    }
    loaded = true
    yield* Effect.logDebug("space index loaded").pipe(Effect.annotateLogs({ space_id: space.spaceId, memories: memories.length }))
    // Facts left pending (a restart, a moved shard, a failed run) are consolidated once things settle.
    if (memories.some((m) => m.type === "fact" && m.consolidatedAt === null && m.state === "active")) yield* factsChanged
    // Models left due for a refresh are scheduled as if their memories had just been recorded.
    yield* Effect.suspend(() => refreshActivated)
  }).pipe(Effect.withSpan("Space.load", { attributes: { org_id: space.orgId, space_id: space.spaceId } }))
  const ensureLoaded = Effect.suspend(() =>
    loaded ? Effect.void : loading.withPermits(1)(Effect.suspend(() => (loaded ? Effect.void : load)))
  )

  const priority = yield* ReadPriority
  // Set once the consolidation loop exists (the writer, made first, tells it about changed facts).
  let factsChanged: Effect.Effect<void> = Effect.void
  let consolidationWoken: Effect.Effect<void> = Effect.void
  // Set once the refresh loop exists (the writer tells it new memories were recorded).
  let refreshRecorded: Effect.Effect<void> = Effect.void
  let refreshActivated: Effect.Effect<void, ServiceUnavailable> = Effect.void
  // Set once the delivery loop exists (the writer tells it deliveries were queued).
  let deliveriesQueued: Effect.Effect<void> = Effect.void
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
    onDeliveriesQueued: Effect.suspend(() => deliveriesQueued),
    clock,
    onFactsChanged: Effect.suspend(() => factsChanged),
    onRecorded: Effect.suspend(() => refreshRecorded),
    embedOne: preparation.embedOne,
    beforeHeavyWrite: priority.beforeHeavyWrite,
    unload: () => {
      loaded = false
    }
  })
  const recall = makeRecall({ space, state, embedder })
  const drain = yield* makeDrain({ space, jobs, writer, settings: preparation.settings, prepareGroup: preparation.prepareGroupWith })

  // One keep-alive for all the loops below, held while any of them works.
  const alive = yield* makeKeepAlive({ linger: KEEP_ALIVE_LINGER, keepAlive: Entity.keepAlive })
  const wake = yield* Queue.sliding<void>(1)
  // A space deleted meanwhile has nothing left to drain (its jobs went with it).
  const drainStep = ensureLoaded.pipe(
    Effect.zipRight(drain.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "drain", space, alive, signal: Queue.take(wake), step: drainStep })
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
    factsChanged = consolidation.nudge
    consolidationWoken = consolidation.woken
    const consolidateStep = ensureLoaded.pipe(
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
  refreshRecorded = refresh.recorded
  refreshActivated = refresh.activated
  const refreshStep = ensureLoaded.pipe(
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
  const documentStep = ensureLoaded.pipe(
    Effect.zipRight(documentLoop.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "documents", space, alive, signal: documentLoop.signal, step: documentStep })
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
  const portabilityStep = ensureLoaded.pipe(
    Effect.zipRight(portability.step),
    Effect.catchTag("SpaceMissing", () => Effect.succeed({ more: false, lagMs: 0 }))
  )
  yield* supervise({ loop: "portability", space, alive, signal: portability.signal, step: portabilityStep })
  yield* portability.nudge

  // Webhook deliveries need no index: they are rows of the store, sent and settled by this loop.
  const delivery = yield* makeDelivery({
    space,
    webhooks,
    transport: yield* WebhookTransport,
    secrets: yield* WebhookSecrets,
    schedule: config.webhookRetrySchedule,
    clock,
    quietFor: () => writer.quietFor()
  })
  deliveriesQueued = delivery.nudge
  yield* supervise({ loop: "deliver", space, alive, signal: delivery.signal, step: delivery.step })
  // Whatever was due before this activation (a restart, a moved shard, a passivated space woken) is sent now.
  yield* delivery.nudge

  const write = (item: WriteItem, settings: ExtractionSettingsValues, events: ReadonlyArray<OutboxEvent>) =>
    Effect.gen(function*() {
      const prepared = yield* preparation.prepare(item, settings)
      const memories = yield* writer.write(prepared, events)
      return { documentId: prepared.document.documentId, memories: memories.map(storedMemory) }
    })

  const guarded = containDefects("a call to the space", space)

  return SpaceEntity.of({
    Write: ({ payload }) =>
      ensureLoaded.pipe(
        Effect.zipRight(preparation.settings),
        // The events handed over with the write are queued in its first item's transaction.
        Effect.flatMap((settings) => Effect.forEach(payload.items, (item, i) => write(item, settings, i === 0 ? payload.events : []))),
        guarded
      ),
    Recall: ({ payload }) => ensureLoaded.pipe(Effect.zipRight(recall(payload)), priority.read, guarded),
    Edit: ({ payload }) => ensureLoaded.pipe(Effect.zipRight(writer.edit(payload)), Effect.map(listItem), guarded),
    Forget: ({ payload }) => ensureLoaded.pipe(Effect.zipRight(writer.forget(payload.memoryId)), guarded),
    DeleteDocument: ({ payload }) => ensureLoaded.pipe(Effect.zipRight(writer.deleteDocument(payload.documentId)), guarded),
    Wake: () =>
      Queue.offer(wake, undefined).pipe(
        Effect.zipRight(consolidationWoken),
        Effect.zipRight(refresh.woken),
        Effect.zipRight(documentLoop.nudge),
        Effect.zipRight(portability.nudge),
        Effect.zipRight(delivery.nudge)
      ),
    // Not while the index is loading: a load finishing after the delete would bring the deleted memories back.
    Delete: () => loading.withPermits(1)(writer.deleteSpace).pipe(guarded)
  })
})

/**
 * Registered on the cluster with the configured idle time (SPACE_IDLE_SECONDS);
 * requests run concurrently (recall never queues behind a write), changes go
 * through the entity's one writer.
 */
export const SpaceEntityLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    SpaceEntity.toLayer(makeSpace(config), { maxIdleTime: config.spaceIdleTime, concurrency: "unbounded" }))
).pipe(Layer.provide([ExtractionSettings.Default, ExtractionThread.layer()]))
