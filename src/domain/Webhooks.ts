/**
 * Webhooks: an HTTPS endpoint told about a space's events, each delivery
 * signed and retried on schedule. The secret is shown once, at creation.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, InvalidWebhookUrl, NoFields, NotFound, UnknownEventType, ValidationError, WebhookLimitReached } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"
import { strict } from "./Strict.ts"

/** The events a webhook can subscribe to. */
export const EVENT_TYPES = ["memory.created", "memory.consolidated", "security.policy_triggered"] as const
export type EventType = (typeof EVENT_TYPES)[number]

export const WEBHOOKS_PER_SPACE = 5

const Url = Schema.String.pipe(Schema.maxLength(2048))
const EventTypes = Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(
  Schema.minItems(1, { message: () => "event_types: at least one event type" }),
  Schema.maxItems(20)
)

export const CreateWebhookRequest = strict(Schema.Struct({
  url: Url,
  event_types: Schema.optional(EventTypes),
  enabled: Schema.optional(Schema.Boolean)
}))
export type CreateWebhookRequest = typeof CreateWebhookRequest.Type

/** Only the fields sent change; an empty body is `no_fields`. */
export const PatchWebhookRequest = strict(Schema.Struct({
  url: Schema.optional(Url),
  event_types: Schema.optional(EventTypes),
  enabled: Schema.optional(Schema.Boolean)
}))
export type PatchWebhookRequest = typeof PatchWebhookRequest.Type

export const Webhook = Schema.Struct({
  id: Schema.String,
  space_id: Schema.String,
  url: Schema.String,
  event_types: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  /** The signing secret: on creation only, null everywhere else. */
  secret: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Webhook = typeof Webhook.Type

export const WebhookList = Schema.Struct({ items: Schema.Array(Webhook) })

export const Delivery = Schema.Struct({
  id: Schema.String,
  event_type: Schema.String,
  url: Schema.String,
  status: Schema.Literal("pending", "processing", "completed", "failed"),
  attempts: Schema.Number,
  response_status: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  next_retry_at: Schema.NullOr(Schema.String),
  last_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String
})
export type Delivery = typeof Delivery.Type

export const DeliveryList = Schema.Struct({ items: Schema.Array(Delivery), next_cursor: Schema.NullOr(Schema.String) })

export const DeliveryListQuery = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)), { default: () => 50 }),
  /** Opaque: the `next_cursor` of the previous page. */
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

const SpacePath = Schema.Struct({ space_id: PathSegment })
const WebhookPath = Schema.Struct({ space_id: PathSegment, webhook_id: PathSegment })

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("create", "/v1/spaces/:space_id/webhooks")
      .setPath(SpacePath)
      .setPayload(CreateWebhookRequest)
      .addSuccess(Webhook, { status: 201 })
      .addError(WebhookLimitReached)
  )
  .add(HttpApiEndpoint.get("list", "/v1/spaces/:space_id/webhooks").setPath(SpacePath).addSuccess(WebhookList))
  .add(
    HttpApiEndpoint.patch("update", "/v1/spaces/:space_id/webhooks/:webhook_id")
      .setPath(WebhookPath)
      .setPayload(PatchWebhookRequest)
      .addSuccess(Webhook)
      .addError(NoFields)
  )
  .add(HttpApiEndpoint.del("delete", "/v1/spaces/:space_id/webhooks/:webhook_id").setPath(WebhookPath).addSuccess(HttpApiSchema.NoContent))
  .add(
    HttpApiEndpoint.get("deliveries", "/v1/spaces/:space_id/webhooks/:webhook_id/deliveries")
      .setPath(WebhookPath)
      .setUrlParams(DeliveryListQuery)
      .addSuccess(DeliveryList)
      .addError(ValidationError)
  )
  .addError(InvalidWebhookUrl)
  .addError(UnknownEventType)
  .addError(NotFound)
  .addError(Forbidden)
  .middleware(Authentication)
{}
