/**
 * Logs: JSON lines when stdout is not a terminal (LOG_FORMAT to force), at
 * LOG_LEVEL. Traces: exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set; HttpApi opens a span per request and each service names its own.
 */
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"

export const Logging = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Layer.merge(config.logFormat === "json" ? Logger.json : Logger.pretty, Logger.minimumLogLevel(config.logLevel)))
)

/** For CLI commands whose stdout is their answer: logs go to stderr, warnings and worse only. */
export const QuietLogging = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)).pipe(
  Layer.merge(Logger.minimumLogLevel(LogLevel.Warning))
)


export const Tracing = Layer.unwrapEffect(
  Effect.flatMap(AppConfig, (config) =>
    Option.match(config.otlpEndpoint, {
      onNone: () => Effect.succeed(Layer.empty),
      // The SDK is loaded only when traces are exported.
      onSome: () => Effect.map(Effect.promise(() => import("./OtlpTracing.ts")), (otlp) => otlp.layer(config.serviceName))
    }))
)
