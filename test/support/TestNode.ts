/** One Engram node over a real HTTP test server, on a given infrastructure; tests call it through HttpClient. */
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Layer, LogLevel, Logger, Option } from "effect"
import { Application } from "../../layers/Application.ts"
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
  serviceName: "engram-test"
})

const Quiet = Logger.minimumLogLevel(LogLevel.Error)

/** HTTP + application services on `infrastructure`, which the caller provides (and may share between nodes). */
export const TestNode = HttpLive.pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Application),
  Layer.provide(TestConfig),
  Layer.provide(Quiet)
)

export const testNode = <E>(infrastructure: Layer.Layer<Infrastructure, E>) =>
  TestNode.pipe(Layer.provideMerge(infrastructure))
