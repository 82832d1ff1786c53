/**
 * Server profile (DATABASE_URL set): a PostgreSQL server, Redis when REDIS_URL
 * is set, and this node as one runner of the cluster (RUNNER_HOST,
 * RUNNER_PORT). Either store configured and unreachable stops start-up;
 * nothing falls back to the embedded store.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"
import { layerPostgres } from "../services/store/Database.ts"
import * as Maintenance from "../services/store/Maintenance.ts"
import * as Migrations from "../services/store/Migrations.ts"
import * as SnapshotStore from "../services/store/SnapshotStore.ts"
import * as Statistics from "../services/store/Statistics.ts"
import { describeUrl } from "../services/UrlRedaction.ts"
import { Cache } from "./Cache.ts"
import * as Cluster from "./Cluster.ts"
import { Models, type ModelServices } from "./Models.ts"
import { SpaceClock } from "../src/space/SpaceClock.ts"
import { StartupError } from "./StartupError.ts"
import { WebhookSecrets } from "../services/webhooks/Signing.ts"
import { PaymentProcessorLive } from "../services/payments/Live.ts"
import { WebhookTransport } from "../services/webhooks/Transport.ts"

const reason = (e: { readonly message: string; readonly cause?: unknown }) =>
  e.cause instanceof Error ? e.cause.message : e.message

export const Store = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { databaseUrl } = yield* AppConfig
    if (Option.isNone(databaseUrl)) return yield* new StartupError({ message: "the server profile needs DATABASE_URL" })
    const url = databaseUrl.value
    // Statistics as tables grow, ahead of autovacuum's first visit to a new database.
    // Erased text is vacuumed out within seconds, not whenever autovacuum comes (Maintenance.ts).
    return Maintenance.serverLayer.pipe(
      Layer.provideMerge(Statistics.layer()),
      // Snapshots of space indexes in the shared store: whichever node a space moves to reads them.
      Layer.merge(SnapshotStore.layerStore),
      Layer.provideMerge(Migrations.layer),
      Layer.provideMerge(layerPostgres(url)),
      Layer.mapError((e) =>
        new StartupError({ message: `cannot use PostgreSQL at ${describeUrl(Redacted.value(url))} (DATABASE_URL): ${reason(e)}` })
      )
    )
  })
)

export const describeStore = Effect.map(AppConfig, (config) =>
  `PostgreSQL at ${Option.match(config.databaseUrl, { onNone: () => "?", onSome: (u) => describeUrl(Redacted.value(u)) })}`)

/** Webhook delivery over HTTPS; secrets sealed with a key WEBHOOK_SECRET_KEY required. */
const Webhooks = Layer.merge(
  WebhookTransport.live,
  WebhookSecrets.required.pipe(Layer.mapError((e) => new StartupError({ message: e.message })))
)

/** The profile on the configured models (or a test's). */
export const profile = <E, R>(models: Layer.Layer<ModelServices, E, R>) =>
  Layer.mergeAll(Cluster.Socket, models, SpaceClock.live, Webhooks, PaymentProcessorLive).pipe(Layer.provideMerge(Layer.mergeAll(Store, Cache)))

export const Infrastructure = profile(Models)
