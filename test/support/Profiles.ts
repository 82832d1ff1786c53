/**
 * The store/cache combinations every HTTP suite runs against: always the
 * embedded profile (PGlite cloned from the run's migrated template, in-process
 * cache); also the server profile (PostgreSQL + Redis) when DATABASE_URL and
 * REDIS_URL are set. Without them the server profile is reported as skipped.
 */
import type { SqlClient } from "@effect/sql"
import { Effect, Layer, Redacted } from "effect"
import { readFileSync } from "node:fs"
import { Cache, layerMemory } from "../../services/cache/Cache.ts"
import { layerRedis } from "../../services/cache/RedisCache.ts"
import { type Embedder, layerLocal } from "../../services/embedder/Embedder.ts"
import { layerPglite, layerPostgres } from "../../services/store/Database.ts"
import * as Extraction from "../../src/ingestion/Extractor.ts"
import type { Extractor } from "../../src/ingestion/Extractor.ts"
import * as Migrations from "../../services/store/Migrations.ts"
import * as Catalogs from "../../services/llm/Catalog.ts"
import type { Catalog } from "../../services/llm/Catalog.ts"

export type Infrastructure = SqlClient.SqlClient | Cache | Embedder | Extractor | Catalog

/** The offline models, compacted once per machine by the global setup. */
const Models = Layer.mergeAll(
  layerLocal({ cacheDir: process.env.ENGRAM_TEST_MODELS_DIR! }),
  Extraction.layerLocal,
  Catalogs.layerStatic(undefined)
)

export interface Profile {
  readonly name: string
  readonly infrastructure: Layer.Layer<Infrastructure, unknown>
}

const templateBlob = () => new Blob([readFileSync(process.env.ENGRAM_TEST_TEMPLATE!)])

export const embedded: Profile = {
  name: "embedded (PGlite + in-process cache)",
  infrastructure: Layer.unwrapEffect(Effect.sync(() =>
    Layer.mergeAll(
      Migrations.layer.pipe(Layer.provideMerge(layerPglite({ dataDir: "memory://", loadDataDir: templateBlob() }))),
      layerMemory,
      Models
    )
  ))
}

const databaseUrl = process.env.ENGRAM_TEST_DATABASE_URL
const redisUrl = process.env.REDIS_URL

export const server: Profile | undefined = databaseUrl && redisUrl
  ? {
    name: "server (PostgreSQL + Redis)",
    infrastructure: Layer.mergeAll(
      Migrations.layer.pipe(Layer.provideMerge(layerPostgres(Redacted.make(databaseUrl), 4))),
      layerRedis(Redacted.make(redisUrl)),
      Models
    )
  }
  : undefined

export const serverSkipReason = server
  ? undefined
  : `server profile skipped: set ${[databaseUrl ? undefined : "DATABASE_URL", redisUrl ? undefined : "REDIS_URL"]
    .filter(Boolean).join(" and ")} to run these tests against PostgreSQL and Redis`

export const profiles: ReadonlyArray<Profile> = server ? [embedded, server] : [embedded]
