/**
 * Server profile (DATABASE_URL set): a PostgreSQL server, Redis when REDIS_URL
 * is set. Either one configured and unreachable stops start-up; nothing falls
 * back to the embedded store.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"
import { layerPostgres } from "../services/store/Database.ts"
import * as Migrations from "../services/store/Migrations.ts"
import { describeUrl } from "../services/UrlRedaction.ts"
import { Cache } from "./Cache.ts"
import { Cluster } from "./Cluster.ts"
import { Models } from "./Models.ts"
import { StartupError } from "./StartupError.ts"

export const Store = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { databaseUrl } = yield* AppConfig
    const url = Option.getOrThrow(databaseUrl)
    return Migrations.layer.pipe(
      Layer.provideMerge(layerPostgres(url)),
      Layer.mapError((e) =>
        new StartupError({
          message: `cannot use PostgreSQL at ${describeUrl(Redacted.value(url))} (DATABASE_URL): ${
            String((e as { cause?: Error }).cause?.message ?? e.message)
          }`
        })
      )
    )
  })
)

export const describeStore = Effect.map(AppConfig, (config) =>
  `PostgreSQL at ${Option.match(config.databaseUrl, { onNone: () => "?", onSome: (u) => describeUrl(Redacted.value(u)) })}`)

export const Infrastructure = Layer.mergeAll(Cluster, Models).pipe(Layer.provideMerge(Layer.mergeAll(Store, Cache)))
