/**
 * The profiles every HTTP suite runs against, built from the real profile
 * files in `layers/`: always the embedded profile (PGlite, cloned from the
 * run's migrated template, one runner); also the server profile (PostgreSQL,
 * Redis, a socket runner) when DATABASE_URL and REDIS_URL are set, each node
 * on a fresh database copied from the run's migrated template database.
 * Without them the server profile is reported as skipped.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { readFileSync } from "node:fs"
import * as Embedded from "../../layers/Embedded.ts"
import { Models, type ModelServices } from "../../layers/Models.ts"
import * as Server from "../../layers/Server.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import type { Cache } from "../../services/cache/Cache.ts"
import { adminUrl, copyTemplate, templateDatabase } from "./Databases.ts"
import { freePort } from "./Process.ts"

export type Infrastructure = Layer.Layer.Success<typeof Embedded.Infrastructure>

export interface Profile {
  readonly name: string
  /** The profile's infrastructure (store, cache, cluster, models), on the given models; it reads the node's AppConfig. */
  readonly infrastructure: (models?: Layer.Layer<ModelServices, unknown, AppConfig | Cache>) => Layer.Layer<Infrastructure, unknown, AppConfig>
}

const templateBlob = () => new Blob([readFileSync(process.env.ENGRAM_TEST_TEMPLATE!)])

export const embedded: Profile = {
  name: "embedded (PGlite + in-process cache)",
  infrastructure: (models) =>
    Layer.unwrapEffect(Effect.sync(() => {
      const store = Embedded.pglite({ dataDir: "memory://", loadDataDir: templateBlob() })
      return models === undefined ? Embedded.profile(store, Models) : Embedded.profile(store, models)
    }))
}

const redisUrl = process.env.REDIS_URL

/** A database of its own for one node; dropped with the node. */
const freshDatabase = Effect.acquireRelease(Effect.promise(copyTemplate), (database) => Effect.promise(database.drop))

export const server: Profile | undefined = templateDatabase && adminUrl && redisUrl
  ? {
    name: "server (PostgreSQL + Redis)",
    infrastructure: (models) =>
      Layer.unwrapScoped(Effect.gen(function*() {
        const config = yield* AppConfig
        const database = yield* freshDatabase
        const runnerPort = yield* Effect.promise(freePort)
        const profile = models === undefined ? Server.profile(Models) : Server.profile(models)
        return profile.pipe(Layer.provide(Layer.succeed(AppConfig, {
          ...config,
          databaseUrl: Option.some(Redacted.make(database.url)),
          redisUrl: Option.some(Redacted.make(redisUrl)),
          runnerHost: "127.0.0.1",
          runnerPort
        })))
      }))
  }
  : undefined

export const serverSkipReason = server
  ? undefined
  : `server profile skipped: set ${[adminUrl ? undefined : "DATABASE_URL", redisUrl ? undefined : "REDIS_URL"]
    .filter(Boolean).join(" and ")} to run these tests against PostgreSQL and Redis`

export const profiles: ReadonlyArray<Profile> = server ? [embedded, server] : [embedded]
