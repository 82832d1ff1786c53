/**
 * `engram/testing`: a whole Engram node inside a test, on the embedded
 * profile (PGlite in memory, `memory://`), the local engine and a real HTTP
 * server on a free port of 127.0.0.1, with an organization and an API key
 * made through the API. Nothing outlives it: stopping it (or the end of the
 * layer's scope) closes the server and drops the store.
 *
 * - `EngramTestNode.layer(options)` for Effect tests (`it.layer(...)`);
 * - `startTestNode(options)` for any test runner: `{ url, apiKey, stop }`.
 *
 * `env` sets the node's environment variables as `engram serve` reads them
 * (`CONSOLIDATION`, `SPACE_IDLE_SECONDS`, `MODELS_CONFIG`, ...); the test
 * process's own environment is not read, so a `DATABASE_URL` set for
 * something else never points the node at a server.
 */
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { Clock, ConfigProvider, Context, Effect, Layer, ManagedRuntime } from "effect"
import { randomBytes } from "node:crypto"
import { fromEnv, AppConfig } from "../config/AppConfig.ts"
import { HttpLive } from "../http/HttpLive.ts"
import { Http, Runtime } from "../../layers/Main.ts"
import { Logging } from "../../layers/Observability.ts"
import { makeEffectClient } from "../client/index.ts"

export interface TestNodeOptions {
  /** Environment variables for the node, as `engram serve` reads them; DATA_DIR and PORT are the node's own. */
  readonly env?: Readonly<Record<string, string>>
}

export interface TestNode {
  /** Where the node listens: `http://127.0.0.1:<port>`. */
  readonly url: string
  /** An API key (`svc_live_...`) of the node's one organization, which owns every space it creates. */
  readonly apiKey: string
}

const DEFAULTS: Readonly<Record<string, string>> = { LOG_LEVEL: "warning", LOG_FORMAT: "json" }

/** The node's settings: `env` over the defaults, in memory, on 127.0.0.1 and a port the system picks. */
const settings = (options: TestNodeOptions) =>
  Layer.effect(
    AppConfig,
    fromEnv.pipe(
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries({ ...DEFAULTS, ...options.env, DATA_DIR: "memory://" })))),
      Effect.map((config) => ({ ...config, host: "127.0.0.1", port: 0 })),
      Effect.orDie
    )
  )

/** The node itself: the application on the embedded profile and its HTTP server, as `engram serve` builds them. */
const node = (options: TestNodeOptions) =>
  HttpLive.pipe(
    Layer.provideMerge(Http),
    Layer.provideMerge(Runtime),
    Layer.provide(Logging),
    Layer.provide(settings(options))
  )

/** An organization and a key, made through the API as a new user makes them. */
const bootstrap = (url: string) =>
  Effect.gen(function*() {
    const anonymous = yield* makeEffectClient({ baseUrl: url })
    const suffix = randomBytes(6).toString("hex")
    const session = yield* anonymous.auth.signup({
      payload: { email: `test-${suffix}@example.com`, password: randomBytes(18).toString("base64url"), org_name: `Test ${suffix}` }
    })
    const owner = yield* makeEffectClient({ baseUrl: url, apiKey: session.session_token })
    const key = yield* owner.apiKeys.create({ payload: { name: "test", env: "live" } })
    return key.raw_key
  }).pipe(Effect.provide(FetchHttpClient.layer), Effect.orDie)

export class EngramTestNode extends Context.Tag("engram/testing/EngramTestNode")<EngramTestNode, TestNode>() {
  /** A node for the layer's scope (`it.layer(EngramTestNode.layer())`). */
  static readonly layer = (options: TestNodeOptions = {}): Layer.Layer<EngramTestNode> =>
    Layer.scoped(
      EngramTestNode,
      Effect.gen(function*() {
        const context = yield* Layer.build(node(options)).pipe(Effect.orDie)
        const address = Context.get(context, HttpServer.HttpServer).address
        const url = address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "http://127.0.0.1"
        return { url, apiKey: yield* bootstrap(url) }
      }).pipe(
        // The node keeps real time even inside a test that runs on a TestClock (@effect/vitest's `it.layer`, `it.effect`):
        // its loops (idle timeout, consolidation, retries) are forked here and keep this clock.
        Effect.withClock(Clock.make())
      )
    )
}

/** Starts a node for a test; `stop()` closes it. */
export const startTestNode = async (options: TestNodeOptions = {}): Promise<TestNode & { readonly stop: () => Promise<void> }> => {
  const runtime = ManagedRuntime.make(EngramTestNode.layer(options))
  try {
    const started = await runtime.runPromise(EngramTestNode)
    return { url: started.url, apiKey: started.apiKey, stop: () => runtime.dispose() }
  } catch (error) {
    await runtime.dispose()
    throw error
  }
}
