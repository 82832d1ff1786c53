/**
 * One Engram node over a real HTTP test server: the application of
 * `layers/Application.ts` on a profile's infrastructure; tests call it
 * through HttpClient.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Layer, LogLevel, Logger, Option, Redacted } from "effect"
import { Entities, Services } from "../../layers/Application.ts"
import { type SpacePartLayers, spaceEntityLive } from "../../src/space/SpaceEntity.ts"
import { SpaceWaker } from "../../src/space/SpaceWaker.ts"
import { type AppConfigShape, AppConfig } from "../../src/config/AppConfig.ts"
import { HttpLive } from "../../src/http/HttpLive.ts"
import { ROOMY_PLANS, TEST_WEBHOOK_KEY } from "./Process.ts"
import type { Infrastructure } from "./Profiles.ts"

export const testSettings: AppConfigShape = {
  host: "127.0.0.1",
  port: 0,
  dataDir: "memory://",
  databaseUrl: Option.none(),
  redisUrl: Option.none(),
  sessionTtl: Duration.hours(720),
  spaceIdleTime: Duration.minutes(5),
  wakeInterval: Duration.seconds(1),
  runnerHost: "127.0.0.1",
  runnerPort: 0,
  logLevel: LogLevel.Warning,
  logFormat: "json",
  otlpEndpoint: Option.none(),
  metricsPort: Option.none(),
  serviceName: "engram-test",
  modelsDir: process.env.ENGRAM_TEST_MODELS_DIR ?? "",
  embeddings: Option.none(),
  modelsConfig: Option.none(),
  extractionModel: Option.none(),
  consolidation: true,
  consolidationDelay: Duration.seconds(1),
  consolidationModel: Option.none(),
  modelRefreshDebounce: Duration.seconds(1),
  webhookRetrySchedule: [0, 5, 300, 1800, 7200, 18000].map(Duration.seconds),
  webhookAllowPrivate: true,
  webhookSecretKey: Option.some(Redacted.make(TEST_WEBHOOK_KEY)),
  // A plan these tests cannot exhaust; the metering tests name their own.
  plansConfig: Option.some(ROOMY_PLANS),
  stripe: Option.none(),
  publicUrl: Option.none()
}

export const settings = (overrides: Partial<AppConfigShape> = {}) => Layer.succeed(AppConfig, { ...testSettings, ...overrides })

const Quiet = Logger.minimumLogLevel(LogLevel.Error)

/** HTTP and the services, without the entities (a test may build them apart, on another clock). */
export const NodeServices = HttpLive.pipe(Layer.provideMerge(NodeHttpServer.layerTest), Layer.provideMerge(Services))

/** The Space entity and the waker, registered on the infrastructure's cluster. */
export const NodeEntities = Entities

/** A whole node on `infrastructure`, with the test settings (and `overrides`). */
export const testNode = <E, R>(infrastructure: Layer.Layer<Infrastructure, E, R>, overrides?: Partial<AppConfigShape>) =>
  NodeServices.pipe(
    Layer.provideMerge(NodeEntities),
    Layer.provideMerge(infrastructure),
    Layer.provide(settings(overrides)),
    Layer.provide(Quiet)
  )

/** A whole node whose spaces are built with `replace`'s parts in place of the defaults (SpaceParts.ts). */
export const testNodeWithParts = <E, R>(
  infrastructure: Layer.Layer<Infrastructure, E, R>,
  replace: Partial<SpacePartLayers>,
  overrides?: Partial<AppConfigShape>
) =>
  NodeServices.pipe(
    Layer.provideMerge(Layer.merge(spaceEntityLive(replace), SpaceWaker)),
    Layer.provideMerge(infrastructure),
    Layer.provide(settings(overrides)),
    Layer.provide(Quiet)
  )
