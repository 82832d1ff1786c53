/**
 * Domain errors. Each carries its HTTP status and the documented wire code;
 * `http/ErrorEnvelope.ts` renders every failure as
 * `{"error":{"code","message","request_id"}}`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

const fields = <const Code extends string>(code: Code) => ({
  code: Schema.Literal(code).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => code)),
  message: Schema.String
})

export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  fields("bad_request"),
  HttpApiSchema.annotations({ status: 400 })
) {}

export class ValidationError extends Schema.TaggedError<ValidationError>()(
  "ValidationError",
  fields("validation_error"),
  HttpApiSchema.annotations({ status: 422 })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  fields("unauthorized"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class KeyExpired extends Schema.TaggedError<KeyExpired>()(
  "KeyExpired",
  fields("key_expired"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()(
  "InvalidApiKey",
  fields("invalid_api_key"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class SessionRequired extends Schema.TaggedError<SessionRequired>()(
  "SessionRequired",
  fields("session_required"),
  HttpApiSchema.annotations({ status: 401 })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  fields("forbidden"),
  HttpApiSchema.annotations({ status: 403 })
) {}

export class InsufficientRole extends Schema.TaggedError<InsufficientRole>()(
  "InsufficientRole",
  fields("insufficient_role"),
  HttpApiSchema.annotations({ status: 403 })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  fields("not_found"),
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A space shared from another organization whose owner has no active key (spec, Authentication 8). */
export class SpaceUnavailable extends Schema.TaggedError<SpaceUnavailable>()(
  "SpaceUnavailable",
  fields("space_unavailable"),
  HttpApiSchema.annotations({ status: 403 })
) {}

/** A unique name (email, space id) is already taken. */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  fields("conflict"),
  HttpApiSchema.annotations({ status: 409 })
) {}

/** A configured dependency (store, cache) is down: loud, never a fallback. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  fields("service_unavailable"),
  HttpApiSchema.annotations({ status: 503 })
) {}

/**
 * Something failed that the caller could not have caused (a bug, or the store
 * refusing a write it should have taken); logged with its cause, answered
 * with a short message. Used where a failure must stay one request's failure
 * instead of bringing down the fiber that served it.
 */
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  fields("internal_error"),
  HttpApiSchema.annotations({ status: 500 })
) {}

/** The failures any authenticated endpoint can answer with. */
export const AuthFailures = [Unauthorized, KeyExpired, InvalidApiKey, ServiceUnavailable] as const

/** The proxy named a model this deployment does not serve; the message names the served ones. */
export class InvalidModel extends Schema.TaggedError<InvalidModel>()(
  "InvalidModel",
  fields("invalid_model"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** Anywhere but the proxy: a model this deployment does not serve; the message lists the served ones. */
export class UnsupportedModel extends Schema.TaggedError<UnsupportedModel>()(
  "UnsupportedModel",
  fields("unsupported_model"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** An unparseable memory header (`X-Svc-*`); the message names the header. */
export class InvalidTunable extends Schema.TaggedError<InvalidTunable>()(
  "InvalidTunable",
  fields("invalid_tunable"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The model is at capacity: its requests_per_minute, or the provider's own 429 after retries. */
export class ModelThrottled extends Schema.TaggedError<ModelThrottled>()(
  "ModelThrottled",
  fields("model_throttled"),
  HttpApiSchema.annotations({ status: 429 })
) {}

/** The model is listed but its provider cannot be reached (timeouts, 5xx, refused connections). */
export class ModelUnavailable extends Schema.TaggedError<ModelUnavailable>()(
  "ModelUnavailable",
  fields("model_unavailable"),
  HttpApiSchema.annotations({ status: 503 })
) {}

/** User-profile endpoints: the space does not exist in the caller's organization. */
export class SpaceNotFound extends Schema.TaggedError<SpaceNotFound>()(
  "SpaceNotFound",
  fields("space_not_found"),
  HttpApiSchema.annotations({ status: 404 })
) {}

/** What a call to a model can fail with, on the wire. */
export const ModelFailures = [ModelThrottled, ModelUnavailable] as const
export type ModelFailure = ModelThrottled | ModelUnavailable

/** A request body over its route's size limit, refused while it is being read. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  fields("payload_too_large"),
  HttpApiSchema.annotations({ status: 413 })
) {}

/** An edit (PATCH) that names no field to change. */
export class NoFields extends Schema.TaggedError<NoFields>()(
  "NoFields",
  fields("no_fields"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** Memory models: the space or the memory model does not exist (the spec's code for both). */
export class ModelError extends Schema.TaggedError<ModelError>()(
  "ModelError",
  fields("model_error"),
  HttpApiSchema.annotations({ status: 404 })
) {}

/** A webhook URL that is not HTTPS, carries credentials, or does not resolve to a public address. */
export class InvalidWebhookUrl extends Schema.TaggedError<InvalidWebhookUrl>()(
  "InvalidWebhookUrl",
  fields("invalid_webhook_url"),
  HttpApiSchema.annotations({ status: 422 })
) {}

/** A webhook subscribed to an event the service does not send; the message lists the ones it does. */
export class UnknownEventType extends Schema.TaggedError<UnknownEventType>()(
  "UnknownEventType",
  fields("unknown_event_type"),
  HttpApiSchema.annotations({ status: 422 })
) {}

/** A sixth webhook in a space (5 per space). */
export class WebhookLimitReached extends Schema.TaggedError<WebhookLimitReached>()(
  "WebhookLimitReached",
  fields("webhook_limit_reached"),
  HttpApiSchema.annotations({ status: 409 })
) {}

/** Documents: more files in one upload than the limit (20). */
export class TooManyFiles extends Schema.TaggedError<TooManyFiles>()(
  "TooManyFiles",
  fields("too_many_files"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** Documents: one file over the per-file limit (25 MB), refused as soon as it is crossed. */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()(
  "FileTooLarge",
  fields("file_too_large"),
  HttpApiSchema.annotations({ status: 413 })
) {}

/** Documents: an upload over the total limit (50 MB), refused as soon as it is crossed. */
export class UploadTooLarge extends Schema.TaggedError<UploadTooLarge>()(
  "UploadTooLarge",
  fields("upload_too_large"),
  HttpApiSchema.annotations({ status: 413 })
) {}

/** The organization's requests per minute, or its credits, are spent: back off (Retry-After says how long). */
export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  fields("rate_limited"),
  HttpApiSchema.annotations({ status: 429 })
) {}

/** Feedback past 10 an hour from one member. */
export class TooManyAttempts extends Schema.TaggedError<TooManyAttempts>()(
  "TooManyAttempts",
  fields("too_many_attempts"),
  HttpApiSchema.annotations({ status: 429 })
) {}

/** POST /v1/billing/upgrade named a paid plan: paid plans go through checkout. */
export class PaymentRequired extends Schema.TaggedError<PaymentRequired>()(
  "PaymentRequired",
  fields("payment_required"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** Checkout with a free or unknown plan, or an upgrade to an unknown one. */
export class InvalidPlan extends Schema.TaggedError<InvalidPlan>()(
  "InvalidPlan",
  fields("invalid_plan"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** The portal or cancel without a subscription (the portal needs a prior checkout). */
export class NoSubscription extends Schema.TaggedError<NoSubscription>()(
  "NoSubscription",
  fields("no_subscription"),
  HttpApiSchema.annotations({ status: 400 })
) {}

/** A processor subscription is active: plans change through the portal, and a move to free waits for it to end. */
export class SubscriptionExists extends Schema.TaggedError<SubscriptionExists>()(
  "SubscriptionExists",
  fields("subscription_exists"),
  HttpApiSchema.annotations({ status: 409 })
) {}

/** A checkout for a different plan is still open. */
export class CheckoutInProgress extends Schema.TaggedError<CheckoutInProgress>()(
  "CheckoutInProgress",
  fields("checkout_in_progress"),
  HttpApiSchema.annotations({ status: 409 })
) {}

/** No payment processor is configured (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET). */
export class BillingNotConfigured extends Schema.TaggedError<BillingNotConfigured>()(
  "BillingNotConfigured",
  fields("billing_not_configured"),
  HttpApiSchema.annotations({ status: 503 })
) {}

/** The plan has no processor price (`stripe_price_id` in the plans file). */
export class PriceNotConfigured extends Schema.TaggedError<PriceNotConfigured>()(
  "PriceNotConfigured",
  fields("price_not_configured"),
  HttpApiSchema.annotations({ status: 503 })
) {}

/** The organization holds as many spaces as its plan allows. */
export class SpaceLimitReached extends Schema.TaggedError<SpaceLimitReached>()(
  "SpaceLimitReached",
  fields("space_limit_reached"),
  HttpApiSchema.annotations({ status: 409 })
) {}
