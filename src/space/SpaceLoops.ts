/**
 * The Space entity's background loops, each a scoped layer over the space's
 * parts (SpaceParts.ts): it subscribes to the hub for what it acts on, runs
 * under the one supervision of SupervisedLoop.ts (a span per step, failures
 * logged and retried on the backoff) and holds the space's shared keep-alive
 * while it works. Leaving one out (or replacing it with `Layer.empty`) leaves
 * the rest of the space as it is.
 */
import { Effect, Layer, Queue, Schedule } from "effect"
import { join } from "node:path"
import { AppConfig } from "../config/AppConfig.ts"
import { Consolidator } from "../consolidation/Consolidator.ts"
import { ParseThread } from "../documents/WorkerParser.ts"
import { Extractor } from "../ingestion/Extractor.ts"
import { LanguageModels } from "../models/LanguageModels.ts"
import { makePortability } from "../portability/PortabilityLoop.ts"
import { ReasonSettings } from "../reason/ReasonSettings.ts"
import { SpaceProfiles } from "../reason/SpaceProfiles.ts"
import { makeScreen } from "../security/Rules.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { ReadPriority } from "../../services/EventLoop.ts"
import { Catalog } from "../../services/llm/Catalog.ts"
import { DocumentRepo } from "../../services/store/DocumentRepo.ts"
import { ExportRepo } from "../../services/store/ExportRepo.ts"
import { ImportRepo } from "../../services/store/ImportRepo.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { ModelRepo } from "../../services/store/ModelRepo.ts"
import { PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import { RuleRepo } from "../../services/store/RuleRepo.ts"
import { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import { WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { WebhookSecrets } from "../../services/webhooks/Signing.ts"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { makeConsolidation } from "./ConsolidationLoop.ts"
import { makeDelivery } from "./DeliveryLoop.ts"
import { makeDocuments } from "./DocumentLoop.ts"
import { makeDrain } from "./DrainLoop.ts"
import { makeRefresh } from "./RefreshLoop.ts"
import { SpaceClock, wallClock } from "./SpaceClock.ts"
import { SpaceAlive, SpaceHub, SpaceIdentity, SpaceIndex, SpacePreparation, SpaceRecaller, SpaceWrites } from "./SpaceParts.ts"
import { backoff, supervise } from "./SupervisedLoop.ts"

/** How often a space looks whether its index snapshot is due. */
const SNAPSHOT_CHECK = "5 seconds"
/** A snapshot is written once the space has had no change for this long ... */
const SNAPSHOT_QUIET_MS = 10_000
/** ... or its index has gone this long without one while changes kept coming. */
const SNAPSHOT_MAX_DIRTY_MS = 300_000
/** ... or two minutes, when a memory was removed or changed: its erased words leave the file well within five. */
const SNAPSHOT_ERASED_MAX_DIRTY_MS = 120_000

/** Queued writes (the Enqueue call's jobs), stored in batched transactions, oldest first. */
export const DrainLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const events = yield* SpaceHub
  const preparation = yield* SpacePreparation
  const drain = yield* makeDrain({
    space,
    jobs: yield* JobRepo,
    writer: yield* SpaceWrites,
    settings: preparation.settings,
    prepareGroup: preparation.prepareGroupWith
  })
  const wake = yield* Queue.sliding<void>(1)
  yield* supervise({ loop: "drain", space, alive: yield* SpaceAlive, signal: Queue.take(wake), step: index.whenReady(drain.step) })
  yield* events.on(["Queued", "Woken"], () => Queue.offer(wake, undefined))
  // Whatever was queued before this activation (a restart, a moved shard) is drained now.
  yield* Queue.offer(wake, undefined)
}))

/** Consolidation of the space's new facts into notes, after they settle (unless CONSOLIDATION=off). */
export const ConsolidationLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  if (!config.consolidation) return
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const events = yield* SpaceHub
  const consolidation = yield* makeConsolidation({
    space,
    state: index.state,
    writer: yield* SpaceWrites,
    consolidator: yield* Consolidator,
    embedder: yield* Embedder,
    delay: config.consolidationDelay,
    clock: yield* SpaceClock,
    beforeHeavyWrite: (yield* ReadPriority).beforeHeavyWrite
  })
  yield* events.on(["FactsChanged"], () => consolidation.nudge)
  yield* events.on(["Woken"], () => consolidation.woken)
  yield* supervise({ loop: "consolidate", space, alive: yield* SpaceAlive, signal: consolidation.signal, step: index.whenReady(consolidation.step) })
}))

/** Memory models refreshed after their debounce once memories are recorded. */
export const RefreshLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const events = yield* SpaceHub
  const refresh = yield* makeRefresh({
    space,
    writer: yield* SpaceWrites,
    recall: yield* SpaceRecaller,
    models: yield* ModelRepo,
    jobs: yield* JobRepo,
    spaces: yield* SpaceRepo,
    catalog: yield* Catalog,
    languageModels: yield* LanguageModels,
    reasonSettings: yield* ReasonSettings,
    profiles: yield* SpaceProfiles,
    debounce: config.modelRefreshDebounce,
    ledger: yield* LedgerRepo,
    clock: yield* SpaceClock
  })
  yield* events.on(["Recorded"], () => refresh.recorded)
  yield* events.on(["Woken"], () => refresh.woken)
  // Reading which models are due needs the store: retried, then logged (the next wake tries again).
  yield* events.on(["Loaded"], () => refresh.activated.pipe(Effect.retry(backoff.pipe(Schedule.compose(Schedule.recurs(5))))))
  yield* supervise({ loop: "refreshModel", space, alive: yield* SpaceAlive, signal: refresh.signal, step: index.whenReady(refresh.step) })
}))

/** Uploaded files: parsed and stored one at a time, behind the space's other writes. */
export const DocumentLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const events = yield* SpaceHub
  const documents = yield* makeDocuments({
    space,
    jobs: yield* JobRepo,
    documents: yield* DocumentRepo,
    writer: yield* SpaceWrites,
    extractor: yield* Extractor,
    embedder: yield* Embedder,
    cachePath: join(config.modelsDir, "ocr"),
    parse: (yield* ParseThread).parse,
    beforeHeavyWrite: (yield* ReadPriority).beforeHeavyWrite,
    screen: makeScreen(yield* RuleRepo, yield* WebhookRepo).screenDocument
  })
  yield* supervise({ loop: "documents", space, alive: yield* SpaceAlive, signal: documents.signal, step: index.whenReady(documents.step) })
  yield* events.on(["Woken"], () => documents.nudge)
  yield* documents.nudge
}))

/** Exports and imports, one job at a time; an import's transaction is the writer's one change, then the index reloads. */
export const PortabilityLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const events = yield* SpaceHub
  const portability = yield* makePortability({
    space,
    jobs: yield* PortabilityRepo,
    exports: yield* ExportRepo,
    imports: yield* ImportRepo,
    rules: yield* RuleRepo,
    webhooks: yield* WebhookRepo,
    ledger: yield* LedgerRepo,
    embedder: yield* Embedder,
    alone: (yield* SpaceWrites).alone,
    reload: index.reload
  })
  yield* supervise({ loop: "portability", space, alive: yield* SpaceAlive, signal: portability.signal, step: index.whenReady(portability.step) })
  yield* events.on(["Woken"], () => portability.nudge)
  yield* portability.nudge
}))

/** Webhook deliveries: rows of the store, sent and settled here; they need no index. */
export const DeliveryLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  const space = yield* SpaceIdentity
  const events = yield* SpaceHub
  const delivery = yield* makeDelivery({
    space,
    webhooks: yield* WebhookRepo,
    transport: yield* WebhookTransport,
    secrets: yield* WebhookSecrets,
    schedule: config.webhookRetrySchedule,
    clock: yield* SpaceClock,
    quietFor: (yield* SpaceWrites).quietFor
  })
  yield* events.on(["DeliveriesQueued", "Woken"], () => delivery.nudge)
  yield* supervise({ loop: "deliver", space, alive: yield* SpaceAlive, signal: delivery.signal, step: delivery.step })
  // Whatever was due before this activation (a restart, a moved shard, a passivated space woken) is sent now.
  yield* delivery.nudge
}))

/**
 * The index snapshot: written once writes pause for a while (or have gone on
 * for long), and when the entity stops (its finalizer waits for a change in
 * progress, since a snapshot holds the index's change lock).
 */
export const SnapshotLoop = Layer.scopedDiscard(Effect.gen(function*() {
  const space = yield* SpaceIdentity
  const index = yield* SpaceIndex
  const writer = yield* SpaceWrites
  const { snapshots } = index
  let dirtySince: number | null = null
  const step = Effect.gen(function*() {
    if (!(yield* index.isLoaded) || !snapshots.dirty()) {
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
  yield* supervise({ loop: "snapshot", space, alive: yield* SpaceAlive, signal: Effect.sleep(SNAPSHOT_CHECK).pipe(Effect.withClock(wallClock)), step })
  yield* Effect.addFinalizer(() =>
    Effect.flatMap(index.isLoaded, (loaded) => (loaded && snapshots.dirty() ? snapshots.save : Effect.void)).pipe(
      Effect.timeout("60 seconds"),
      Effect.tapErrorCause((cause) => Effect.logWarning("saving the index snapshot as the space stopped failed", cause)),
      Effect.ignore
    ))
}))

/**
 * Every loop of a space. The snapshot loop is built last, so that its
 * finalizer (the last snapshot) runs first as the entity stops, while the
 * other loops can still finish a change in progress.
 */
export const SpaceLoops = SnapshotLoop.pipe(
  Layer.provideMerge(Layer.mergeAll(DrainLoop, ConsolidationLoop, RefreshLoop, DocumentLoop, PortabilityLoop, DeliveryLoop))
)
