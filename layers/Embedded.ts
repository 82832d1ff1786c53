/**
 * Embedded profile (no DATABASE_URL): PGlite in-process under DATA_DIR, locked
 * against a second process; one runner owning every shard; in-process cache
 * unless REDIS_URL is set. Several nodes need the server profile.
 */
import { Effect, Layer } from "effect"
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { AppConfig } from "../src/config/AppConfig.ts"
import { layerPglite } from "../services/store/Database.ts"
import { lockDataDir } from "../services/store/DataDirLock.ts"
import * as Migrations from "../services/store/Migrations.ts"
import * as SnapshotStore from "../services/store/SnapshotStore.ts"
import * as Maintenance from "../services/store/Maintenance.ts"
import * as Statistics from "../services/store/Statistics.ts"
import { installedTemplate } from "../services/InstallCache.ts"
import { Cache } from "./Cache.ts"
import * as Cluster from "./Cluster.ts"
import { Models, type ModelServices } from "./Models.ts"
import { SpaceClock } from "../src/space/SpaceClock.ts"
import { StartupError } from "./StartupError.ts"
import { WebhookSecrets } from "../services/webhooks/Signing.ts"
import { PaymentProcessorLive } from "../services/payments/Live.ts"
import { WebhookTransport } from "../services/webhooks/Transport.ts"

/**
 * The embedded store: a migrated PGlite, in `dataDir` or (`memory://`) in
 * memory, optionally seeded from a dump, whose planner statistics follow its
 * tables as they grow, and which is checkpointed and vacuumed (PGlite runs
 * no checkpointer and no autovacuum, Maintenance.ts); index snapshots as files
 * in `snapshots`, or in memory beside a store in memory.
 */
export const pglite = (options: { readonly dataDir: string; readonly loadDataDir?: Blob | undefined; readonly snapshots?: string | undefined }) =>
  Maintenance.layer.pipe(
    // What a server's checkpointer and autovacuum would do: PGlite runs neither.
    Layer.provideMerge(Statistics.layer()),
    Layer.provideMerge(Migrations.layer),
    Layer.provideMerge(layerPglite(options)),
    Layer.merge(options.snapshots === undefined ? SnapshotStore.layerMemory : SnapshotStore.layerFiles(options.snapshots)),
    Layer.mapError((e) => new StartupError({ message: `cannot open the embedded store under ${options.dataDir}: ${e.message}` }))
  )

/** `DATA_DIR=memory://`: the store lives in memory and goes with the process; nothing is written to disk. */
const inMemory = (dataDir: string) => dataDir.startsWith("memory://")

/** Where DATA_DIR's PGlite keeps its files (or `memory://`). */
const storeDirectory = (dataDir: string) => inMemory(dataDir) ? dataDir : resolve(dataDir, "pglite")

/** DATA_DIR's store, locked to this process. */
export const Store = Layer.unwrapScoped(
  Effect.gen(function*() {
    const { dataDir } = yield* AppConfig
    if (!inMemory(dataDir)) yield* lockDataDir(dataDir).pipe(Effect.mapError((e) => new StartupError({ message: e.message })))
    const directory = storeDirectory(dataDir)
    // A first start copies the data directory `npm install` prepared (about 1.4 s) instead of running initdb (about 5 s).
    const template = existsSync(directory) ? undefined : installedTemplate(Migrations.MIGRATION_NAMES)
    return pglite({ dataDir: directory, loadDataDir: template, snapshots: inMemory(dataDir) ? undefined : resolve(dataDir, "snapshots") })
  })
)

export const describeStore = Effect.map(AppConfig, (config) =>
  inMemory(config.dataDir) ? "embedded PGlite in memory" : `embedded PGlite at ${storeDirectory(config.dataDir)}`)

/** Webhook delivery over HTTPS; secrets sealed with a key kept under DATA_DIR unless WEBHOOK_SECRET_KEY is set. */
const Webhooks = Layer.merge(
  WebhookTransport.live,
  WebhookSecrets.orDataDir.pipe(Layer.mapError((e) => new StartupError({ message: e.message })))
)

/** The profile over a given embedded store (DATA_DIR's, or a test's) and models (the configured ones, or a test's). */
export const profile = <E, R, E2, R2>(
  store: Layer.Layer<Layer.Layer.Success<typeof Store>, E, R>,
  models: Layer.Layer<ModelServices, E2, R2>
) => Layer.mergeAll(Cluster.Single, models, SpaceClock.live, Webhooks, PaymentProcessorLive).pipe(Layer.provideMerge(Layer.mergeAll(store, Cache)))

export const Infrastructure = profile(Store, Models)
