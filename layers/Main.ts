/**
 * Picks the profile from the environment: DATABASE_URL set -> Server
 * (PostgreSQL, a cluster of runners), otherwise Embedded (PGlite, one
 * runner). The cache is Redis whenever REDIS_URL is set. `Serve` adds HTTP
 * on HOST:PORT; the CLI's store commands take only the store and the cache.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { guardConnection } from "../src/http/BodyGuard.ts"
import { AppConfig } from "../src/config/AppConfig.ts"
import { HttpLive } from "../src/http/HttpLive.ts"
import { MetricsApp } from "../src/http/MetricsRoute.ts"
import { Application } from "./Application.ts"
import { Cache, describeCache } from "./Cache.ts"
import * as Embedded from "./Embedded.ts"
import { Embedder } from "./Models.ts"
import { Logging, Tracing } from "./Observability.ts"
import * as Server from "./Server.ts"

const isServer = Effect.map(AppConfig, (config) => Option.isSome(config.databaseUrl))

export const Infrastructure = Layer.unwrapEffect(
  Effect.map(isServer, (server) => (server ? Server.Infrastructure : Embedded.Infrastructure))
)

/** The store and the cache alone: what the operator CLI's account and key commands need (no cluster, no models). */
export const StoreAndCache = Layer.unwrapEffect(
  Effect.map(isServer, (server) => Layer.merge(server ? Server.Store : Embedded.Store, Cache))
)

/** The store, the cache and the configured embedder: what `engram reembed` needs. */
export const StoreAndEmbedder = Layer.unwrapEffect(
  Effect.map(isServer, (server) => Layer.mergeAll(server ? Server.Store : Embedded.Store, Embedder, Cache))
)

/** Everything but HTTP. */
export const Runtime = Application.pipe(Layer.provideMerge(Infrastructure))

const Announce = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = yield* isServer
    const store = yield* server ? Server.describeStore : Embedded.describeStore
    const cache = yield* describeCache
    const cluster = server
      ? `runner ${config.runnerHost}:${config.runnerPort} (listening on ${config.host}:${config.runnerPort})`
      : "one runner (embedded)"
    yield* Effect.logInfo(`Engram listening on http://${config.host}:${config.port}`).pipe(
      Effect.annotateLogs({ store, cache, cluster, data_dir: config.dataDir })
    )
  })
)

/** The API's HTTP server on HOST:PORT, with the connection guard. */
export const Http = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    NodeHttpServer.layer(() => {
      // Headers must arrive within 20 s; a body slower than the minimum rate is cut off with 408 (BodyGuard.ts).
      const server = createServer({ headersTimeout: 20_000 })
      server.on("request", guardConnection)
      return server
    }, { port: config.port, host: config.host }))
)

/** `GET /metrics` on HOST:METRICS_PORT, a server of its own, when METRICS_PORT is set. */
const Metrics = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.metricsPort, {
      onNone: () => Layer.empty,
      onSome: (port) => MetricsApp.pipe(Layer.provide(NodeHttpServer.layer(createServer, { port, host: config.host })))
    }))
)

/**
 * The port opens only once the store is migrated and the services are built:
 * a listening socket with no handler yet would accept requests and never answer.
 */
export const Serve = Layer.mergeAll(HttpLive, Announce, Metrics).pipe(
  Layer.provide(Http.pipe(Layer.provideMerge(Runtime))),
  Layer.provide(Tracing),
  Layer.provide(Logging)
)
