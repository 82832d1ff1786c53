/** One Engram node over a real HTTP test server, on a given infrastructure; tests call it through HttpClient. */
import { TestRunner } from "@effect/cluster"
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Layer, LogLevel, Logger, Option } from "effect"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import { Entities, Services } from "../../layers/Application.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { HttpLive } from "../../src/http/HttpLive.ts"
import type { Infrastructure } from "./Profiles.ts"

export const testSettings: AppConfigShape = {
  host: "127.0.0.1",
  port: 0,
  dataDir: "memory://",
  databaseUrl: Option.none(),
  redisUrl: Option.none(),
  sessionTtl: Duration.hours(720),
  spaceIdleTime: Duration.minutes(5),
  logLevel: LogLevel.Warning,
  logFormat: "json",
  otlpEndpoint: Option.none(),
  serviceName: "engram-test",
  modelsDir: process.env.ENGRAM_TEST_MODELS_DIR ?? "",
  embeddings: Option.none(),
  modelsConfig: Option.none(),
  extractionModel: Option.none()
}

export const TestConfig = Layer.succeed(AppConfig, testSettings)

const Quiet = Logger.minimumLogLevel(LogLevel.Error)

/** HTTP + application services, without the entities: the caller provides infrastructure and a cluster running them. */
const nodeServices = (config: Layer.Layer<AppConfig>) =>
  HttpLive.pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provideMerge(Services),
    Layer.provide(config),
    Layer.provide(Quiet)
  )

/** The entities on their own in-memory cluster. */
const cluster = (config: Layer.Layer<AppConfig>) =>
  Entities.pipe(Layer.provideMerge(TestRunner.layer), Layer.provide(config), Layer.provide(Quiet))

export const TestNodeServices = nodeServices(TestConfig)
export const TestCluster = cluster(TestConfig)

/** A whole node: HTTP, services and its own cluster; the caller provides the infrastructure. */
export const TestNode = TestNodeServices.pipe(Layer.provideMerge(TestCluster))

export const testNode = <E>(infrastructure: Layer.Layer<Infrastructure, E>, overrides?: Partial<AppConfigShape>) => {
  if (overrides === undefined) return TestNode.pipe(Layer.provideMerge(infrastructure))
  const config = Layer.succeed(AppConfig, { ...testSettings, ...overrides })
  return nodeServices(config).pipe(Layer.provideMerge(cluster(config)), Layer.provideMerge(infrastructure))
}
