import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"

export const WebhookHandlers = HttpApiBuilder.group(EngramApi, "webhooks", (handlers) =>
  Effect.map(Webhooks, (webhooks) =>
    handlers
      .handle("create", ({ path, payload }) => Effect.flatMap(Principal, (p) => webhooks.create(p, path.space_id, payload)))
      .handle("list", ({ path }) => Effect.flatMap(Principal, (p) => webhooks.list(p, path.space_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(Principal, (p) => webhooks.update(p, path.space_id, path.webhook_id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (p) => webhooks.remove(p, path.space_id, path.webhook_id)))
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.flatMap(Principal, (p) => webhooks.deliveries(p, path.space_id, path.webhook_id, urlParams)))))
