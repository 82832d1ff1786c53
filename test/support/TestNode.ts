/** One Engram node over a real HTTP test server, on a given infrastructure; tests call it through HttpClient. */
import { TestRunner } from "@effect/cluster"
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Layer, LogLevel, Logger, Option } from "effect"
import { Entities, Services } from "../../layers/Application.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { HttpLive } from "../../src/http/HttpLive.ts"
import type { Infrastructure } from "./Profiles.ts"

export const TestConfig = Layer.succeed(AppConfig, {
  host: "127.0.0.1",
  port: 0,
  dataDir: "memory://",
  databaseUrl: Option.none(),
  redisUrl: Option.none(),
  sessionTtl: Duration.hours(720),
  logLevel: LogLevel.Warning,
  logFormat: "json",
  otlpEndpoint: Option.none(),
  serviceName: "engram-test",
  modelsDir: process.env.ENGRAM_TEST_MODELS_DIR ?? "",
  embeddings: Option.none()
})

const Quiet = Logger.minimumLogLevel(LogLevel.Error)

/** HTTP + application services, without the entities: the caller provides infrastructure and a cluster running them. */
export const TestNodeServices = HttpLive.pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Services),
  Layer.provide(TestConfig),
  Layer.provide(Quiet)
)

/** The entities on their own in-memory cluster. */
export const TestCluster = Entities.pipe(Layer.provideMerge(TestRunner.layer), Layer.provide(TestConfig), Layer.provide(Quiet))

/** A whole node: HTTP, services and its own cluster; the caller provides the infrastructure. */
export const TestNode = TestNodeServices.pipe(Layer.provideMerge(TestCluster))

export const testNode = <E>(infrastructure: Layer.Layer<Infrastructure, E>) =>
  TestNode.pipe(Layer.provideMerge(infrastructure))
