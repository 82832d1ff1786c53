/** Every setting, read from the environment once; a bad value stops start-up with the variable's name. */
import { Config, ConfigError, Context, Duration, Effect, Either, Layer, LogLevel, Option, Redacted } from "effect"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"

export interface AppConfigShape {
  readonly host: string
  readonly port: number
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly redisUrl: Option.Option<Redacted.Redacted>
  readonly sessionTtl: Duration.Duration
  /** A space's entity passivates (drops its in-memory index) after this long without a message. */
  readonly spaceIdleTime: Duration.Duration
  /** How often the cluster's waker looks for spaces with work due (queued writes) and wakes them. */
  readonly wakeInterval: Duration.Duration
  /** The address other runners reach this one at (server profile): RUNNER_HOST, default the machine's hostname. */
  readonly runnerHost: string
  /** The port this runner listens on for other runners: RUNNER_PORT, default 34431. */
  readonly runnerPort: number
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "json" | "pretty"
  readonly otlpEndpoint: Option.Option<string>
  /** METRICS_PORT: serves `GET /metrics` (Prometheus text) on HOST:METRICS_PORT; unset = no metrics server. */
  readonly metricsPort: Option.Option<number>
  readonly serviceName: string
  /** Where offline model files are kept (compacted word vectors); default DATA_DIR/models. */
  readonly modelsDir: string
  /** The operator's model catalog file (JSON); unset = the built-in local engine only. */
  readonly modelsConfig: Option.Option<string>
  /** The catalog model that extracts memories (full id, short name or tier); unset = the built-in local engine. */
  readonly extractionModel: Option.Option<string>
  /** CONSOLIDATION: whether spaces consolidate facts into notes (default on). */
  readonly consolidation: boolean
  /** CONSOLIDATION_DELAY_SECONDS: how long writes to a space must have settled before it consolidates. */
  readonly consolidationDelay: Duration.Duration
  /** CONSOLIDATION_MODEL: the catalog model that writes notes; unset = the offline engine. */
  readonly consolidationModel: Option.Option<string>
  /** MODEL_REFRESH_DEBOUNCE_SECONDS: how long a space's new memories must have settled before a model refreshes on them. */
  readonly modelRefreshDebounce: Duration.Duration
  /** An OpenAI-compatible embeddings endpoint; unset = the offline embedder. */
  readonly embeddings: Option.Option<{
    readonly baseUrl: string
    readonly model: string
    readonly apiKey: Option.Option<Redacted.Redacted>
  }>
  /** WEBHOOK_RETRY_SCHEDULE: the delay before each delivery attempt (the first is usually 0); its length is the number of attempts. */
  readonly webhookRetrySchedule: ReadonlyArray<Duration.Duration>
  /** WEBHOOK_ALLOW_PRIVATE=1: webhooks may also point at loopback and private addresses (development and tests only). */
  readonly webhookAllowPrivate: boolean
  /** WEBHOOK_SECRET_KEY: encrypts webhook secrets at rest (required on the server profile). */
  readonly webhookSecretKey: Option.Option<Redacted.Redacted>
  /** PLANS_CONFIG: the operator's plans file (JSON); unset = the built-in plans (docs/metering.md). */
  readonly plansConfig: Option.Option<string>
  /**
   * The payment processor (Stripe): STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET
   * together (one without the other stops start-up); STRIPE_API_URL points the
   * client at another address of the Stripe API (a stand-in). Unset = billing
   * answers 503 billing_not_configured.
   */
  readonly stripe: Option.Option<StripeSettings>
  /** PUBLIC_URL: where users reach this service (checkout and portal return here); default http://localhost:PORT. */
  readonly publicUrl: Option.Option<string>
  /**
   * MCP_ALLOWED_ORIGINS: browser origins (comma-separated) that may call /mcp besides loopback and
   * PUBLIC_URL's origin; a request with any other Origin header gets 403 (DNS rebinding protection).
   */
  readonly mcpAllowedOrigins?: ReadonlyArray<string> | undefined
}

export interface StripeSettings {
  readonly secretKey: Redacted.Redacted
  readonly webhookSecret: Redacted.Redacted
  readonly apiUrl: Option.Option<URL>
}

/** The spec's schedule: at once, then after 5 s, 5 min, 30 min, 2 h and 5 h. */
export const DEFAULT_WEBHOOK_SCHEDULE = "0,5,300,1800,7200,18000"

/** Comma-separated seconds, 1 to 20 of them, each between 0 and 7 days. */
export const parseRetrySchedule = (text: string): Either.Either<ReadonlyArray<Duration.Duration>, string> => {
  const parts = text.split(",").map((p) => p.trim())
  if (parts.length < 1 || parts.length > 20) return Either.left("must list 1 to 20 delays in seconds, comma-separated")
  const seconds = parts.map((p) => (/^\d+(\.\d+)?$/.test(p) ? Number(p) : Number.NaN))
  if (seconds.some((s) => !Number.isFinite(s) || s > 604_800)) {
    return Either.left("must list delays in seconds (numbers from 0 to 604800), comma-separated")
  }
  return Either.right(seconds.map((s) => Duration.millis(Math.round(s * 1000))))
}

const LOG_LEVELS: Record<string, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  warn: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

const nonEmptyRedacted = (name: string) =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.filter((value) => Redacted.value(value).trim() !== ""))
  )

export const fromEnv: Config.Config<AppConfigShape> = Config.all({
  host: Config.string("HOST").pipe(Config.withDefault("0.0.0.0")),
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  dataDir: Config.string("DATA_DIR").pipe(Config.withDefault("./data")),
  databaseUrl: nonEmptyRedacted("DATABASE_URL"),
  redisUrl: nonEmptyRedacted("REDIS_URL"),
  sessionTtl: Config.integer("SESSION_TTL_HOURS").pipe(
    Config.validate({ message: "must be between 1 and 8760", validation: (h) => h >= 1 && h <= 8760 }),
    Config.withDefault(720),
    Config.map(Duration.hours)
  ),
  spaceIdleTime: Config.integer("SPACE_IDLE_SECONDS").pipe(
    Config.validate({ message: "must be between 1 and 86400", validation: (s) => s >= 1 && s <= 86400 }),
    Config.withDefault(300),
    Config.map(Duration.seconds)
  ),
  runnerHost: Config.string("RUNNER_HOST").pipe(
    Config.map((host) => host.trim()),
    Config.validate({ message: "must not be empty", validation: (host) => host !== "" }),
    Config.withDefault(hostname())
  ),
  runnerPort: Config.port("RUNNER_PORT").pipe(Config.withDefault(34431)),
  logLevel: Config.string("LOG_LEVEL").pipe(
    Config.withDefault("info"),
    Config.mapOrFail((value) => {
      const level = LOG_LEVELS[value.trim().toLowerCase()]
      return level
        ? Either.right(level)
        : Either.left(ConfigError.InvalidData([], `LOG_LEVEL must be one of ${Object.keys(LOG_LEVELS).join(", ")}`))
    })
  ),
  logFormat: Config.literal("json", "pretty", "auto")("LOG_FORMAT").pipe(
    Config.withDefault("auto" as const),
    Config.map((format) => format === "auto" ? (process.stdout.isTTY ? "pretty" as const : "json" as const) : format)
  ),
  otlpEndpoint: Config.option(Config.string("OTEL_EXPORTER_OTLP_ENDPOINT")).pipe(
    Config.map(Option.filter((s) => s.trim() !== ""))
  ),
  metricsPort: Config.option(Config.port("METRICS_PORT")),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("engram")),
  modelsDir: Config.option(Config.string("MODELS_DIR")),
  modelsConfig: Config.option(Config.string("MODELS_CONFIG")).pipe(Config.map(Option.filter((s) => s.trim() !== ""))),
  extractionModel: Config.option(Config.string("EXTRACTION_MODEL")).pipe(
    Config.map((name) => Option.filter(Option.map(name, (s) => s.trim()), (s) => s !== ""))
  ),
  consolidation: Config.literal("on", "off")("CONSOLIDATION").pipe(
    Config.withDefault("on" as const),
    Config.map((value) => value === "on")
  ),
  consolidationDelay: Config.integer("CONSOLIDATION_DELAY_SECONDS").pipe(
    Config.validate({ message: "must be between 0 and 3600", validation: (s) => s >= 0 && s <= 3600 }),
    Config.withDefault(5),
    Config.map(Duration.seconds)
  ),
  consolidationModel: Config.option(Config.string("CONSOLIDATION_MODEL")).pipe(
    Config.map((name) => Option.filter(Option.map(name, (s) => s.trim()), (s) => s !== ""))
  ),
  modelRefreshDebounce: Config.integer("MODEL_REFRESH_DEBOUNCE_SECONDS").pipe(
    Config.validate({ message: "must be between 0 and 86400", validation: (s) => s >= 0 && s <= 86_400 }),
    Config.withDefault(30),
    Config.map(Duration.seconds)
  ),
  webhookRetrySchedule: Config.string("WEBHOOK_RETRY_SCHEDULE").pipe(
    Config.withDefault(DEFAULT_WEBHOOK_SCHEDULE),
    Config.mapOrFail((text) =>
      Either.mapLeft(parseRetrySchedule(text), (message) => ConfigError.InvalidData([], `WEBHOOK_RETRY_SCHEDULE ${message}`))
    )
  ),
  webhookAllowPrivate: Config.literal("0", "1", "true", "false")("WEBHOOK_ALLOW_PRIVATE").pipe(
    Config.withDefault("0" as const),
    Config.map((value) => value === "1" || value === "true")
  ),
  webhookSecretKey: nonEmptyRedacted("WEBHOOK_SECRET_KEY").pipe(
    Config.validate({
      message: "WEBHOOK_SECRET_KEY must have at least 32 characters (e.g. openssl rand -base64 32)",
      validation: (key) => Option.isNone(key) || Redacted.value(key.value).trim().length >= 32
    })
  ),
  plansConfig: Config.option(Config.string("PLANS_CONFIG")).pipe(Config.map(Option.filter((s) => s.trim() !== ""))),
  stripe: Config.all({
    secretKey: nonEmptyRedacted("STRIPE_SECRET_KEY"),
    webhookSecret: nonEmptyRedacted("STRIPE_WEBHOOK_SECRET"),
    apiUrl: Config.option(Config.string("STRIPE_API_URL")).pipe(Config.map(Option.filter((s) => s.trim() !== "")))
  }).pipe(
    Config.mapOrFail(({ apiUrl, secretKey, webhookSecret }) => {
      if (Option.isNone(secretKey) && Option.isNone(webhookSecret)) return Either.right(Option.none())
      if (Option.isNone(secretKey) || Option.isNone(webhookSecret)) {
        return Either.left(ConfigError.InvalidData(
          [],
          "STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET go together: without the webhook secret no payment could change a plan"
        ))
      }
      if (Option.isNone(apiUrl)) return Either.right(Option.some({ secretKey: secretKey.value, webhookSecret: webhookSecret.value, apiUrl: Option.none() }))
      const url = URL.canParse(apiUrl.value) ? new URL(apiUrl.value) : undefined
      if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
        return Either.left(ConfigError.InvalidData(["STRIPE_API_URL"], "must be an http:// or https:// URL"))
      }
      return Either.right(Option.some({ secretKey: secretKey.value, webhookSecret: webhookSecret.value, apiUrl: Option.some(url) }))
    })
  ),
  publicUrl: Config.option(Config.string("PUBLIC_URL")).pipe(
    Config.map(Option.filter((s) => s.trim() !== "")),
    Config.validate({
      message: "PUBLIC_URL must be an http:// or https:// URL",
      validation: (url) => Option.isNone(url) || /^https?:\/\/[^/]/.test(url.value) && URL.canParse(url.value)
    }),
    Config.map(Option.map((url) => url.replace(/\/+$/, "")))
  ),
  mcpAllowedOrigins: Config.string("MCP_ALLOWED_ORIGINS").pipe(
    Config.withDefault(""),
    Config.map((text) => text.split(",").map((origin) => origin.trim().replace(/\/+$/, "")).filter((origin) => origin !== "")),
    Config.validate({
      message: "MCP_ALLOWED_ORIGINS must list origins such as https://app.example.com, comma-separated",
      validation: (origins) => origins.every((origin) => URL.canParse(origin) && new URL(origin).origin === origin)
    })
  ),
  embeddings: Config.option(Config.all({
    baseUrl: Config.string("EMBEDDINGS_BASE_URL"),
    model: Config.string("EMBEDDINGS_MODEL"),
    apiKey: Config.option(Config.redacted("EMBEDDINGS_API_KEY"))
  }))
}).pipe(Config.map(({ modelsDir, ...config }) => ({
  ...config,
  wakeInterval: Duration.seconds(5),
  modelsDir: Option.getOrElse(modelsDir, () => join(config.dataDir.startsWith("memory://") ? tmpdir() : config.dataDir, "models"))
})))

export class AppConfig extends Context.Tag("engram/config/AppConfig")<AppConfig, AppConfigShape>() {
  static readonly layer = Layer.effect(AppConfig, fromEnv)
  static readonly make = (overrides: Partial<AppConfigShape> = {}) =>
    Layer.effect(AppConfig, Effect.map(fromEnv, (config) => ({ ...config, ...overrides })))
}
