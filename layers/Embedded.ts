/**
 * Embedded profile (no DATABASE_URL): PGlite in-process under DATA_DIR, locked
 * against a second process; in-process cache unless REDIS_URL is set.
 */
import { Effect, Layer } from "effect"
import { resolve } from "node:path"
import { AppConfig } from "../src/config/AppConfig.ts"
import { layerPglite } from "../services/store/Database.ts"
import { lockDataDir } from "../services/store/DataDirLock.ts"
import * as Migrations from "../services/store/Migrations.ts"
import { Cache } from "./Cache.ts"
import { Cluster } from "./Cluster.ts"
import { Models } from "./Models.ts"
import { StartupError } from "./StartupError.ts"

export const Store = Layer.unwrapScoped(
  Effect.gen(function*() {
    const { dataDir } = yield* AppConfig
    yield* lockDataDir(dataDir).pipe(Effect.mapError((e) => new StartupError({ message: e.message })))
    return Migrations.layer.pipe(
      Layer.provideMerge(layerPglite({ dataDir: resolve(dataDir, "pglite") })),
      Layer.mapError((e) => new StartupError({ message: `cannot open the embedded store under ${resolve(dataDir)}: ${e.message}` }))
    )
  })
)

export const describeStore = Effect.map(AppConfig, (config) => `embedded PGlite at ${resolve(config.dataDir, "pglite")}`)

export const Infrastructure = Layer.mergeAll(Cluster, Models).pipe(Layer.provideMerge(Layer.mergeAll(Store, Cache)))
