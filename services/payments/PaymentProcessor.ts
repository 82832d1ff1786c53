/**
 * The payment processor billing talks to: checkout sessions for a paid plan,
 * the customer portal, subscriptions, and the processor's signed callbacks.
 * What comes back is decoded to the few fields billing reads. Stripe is the
 * one implementation (`Stripe.ts`); without configuration every call fails
 * with `NotConfigured`, which billing answers as 503 billing_not_configured.
 */
import { Context, Data, Effect, Layer, Schema } from "effect"

/** No processor is configured on this deployment. */
export class NotConfigured extends Data.TaggedError("NotConfigured")<{}> {}

/** The processor refused a call or did not answer. */
export class ProcessorError extends Data.TaggedError("ProcessorError")<{ readonly message: string }> {}

/** A callback whose signature does not verify, or whose body is not an event. */
export class InvalidEvent extends Data.TaggedError("InvalidEvent")<{ readonly message: string }> {}

const Seconds = Schema.Number.pipe(Schema.int(), Schema.nonNegative())
const Metadata = Schema.Record({ key: Schema.String, value: Schema.String })
/** An id field the processor sends either as the id or as the expanded object. */
const Ref = Schema.Union(Schema.String, Schema.Struct({ id: Schema.String }).pipe(Schema.pluck("id")))

export const CheckoutSessionBody = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("checkout.session"),
  url: Schema.NullOr(Schema.String),
  status: Schema.NullOr(Schema.Literal("open", "complete", "expired")),
  expires_at: Seconds,
  customer: Schema.optionalWith(Schema.NullOr(Ref), { default: () => null }),
  subscription: Schema.optionalWith(Schema.NullOr(Ref), { default: () => null }),
  client_reference_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  metadata: Schema.optionalWith(Schema.NullOr(Metadata), { default: () => null })
})

export const SubscriptionBody = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("subscription"),
  customer: Ref,
  status: Schema.String,
  cancel_at_period_end: Schema.Boolean,
  billing_cycle_anchor: Seconds,
  metadata: Schema.optionalWith(Metadata, { default: () => ({}) }),
  items: Schema.Struct({
    data: Schema.Array(Schema.Struct({
      price: Schema.Struct({ id: Schema.String }),
      current_period_start: Seconds,
      current_period_end: Seconds
    })).pipe(Schema.minItems(1))
  })
})

const PortalBody = Schema.Struct({ id: Schema.String, url: Schema.String })

/** An event of the processor, with the object it carries (decoded later, by its type). */
export const EventBody = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("event"),
  type: Schema.String,
  created: Seconds,
  data: Schema.Struct({ object: Schema.Unknown })
})
export type ProcessorEvent = typeof EventBody.Type

export interface CheckoutSession {
  readonly sessionId: string
  readonly url: string
  readonly status: "open" | "complete" | "expired"
  readonly expiresAt: Date
  readonly customerId: string | null
  readonly subscriptionId: string | null
  readonly orgId: string | null
}

export interface Subscription {
  readonly subscriptionId: string
  readonly customerId: string
  /** The processor's status: active, trialing, past_due, canceled, unpaid, incomplete, … */
  readonly status: string
  readonly priceId: string
  readonly cancelAtPeriodEnd: boolean
  /** The day of the month the processor bills on (the periods' anchor). */
  readonly billingCycleAnchor: Date
  readonly periodStart: Date
  readonly periodEnd: Date
  readonly orgId: string | null
}

const fromSeconds = (seconds: number) => new Date(seconds * 1000)

export const toCheckout = (body: typeof CheckoutSessionBody.Type): CheckoutSession => ({
  sessionId: body.id,
  url: body.url ?? "",
  status: body.status ?? "open",
  expiresAt: fromSeconds(body.expires_at),
  customerId: body.customer,
  subscriptionId: body.subscription,
  orgId: body.metadata?.org_id ?? body.client_reference_id
})

export const toSubscription = (body: typeof SubscriptionBody.Type): Subscription => {
  const item = body.items.data[0]!
  return {
    subscriptionId: body.id,
    customerId: body.customer,
    status: body.status,
    priceId: item.price.id,
    cancelAtPeriodEnd: body.cancel_at_period_end,
    billingCycleAnchor: fromSeconds(body.billing_cycle_anchor),
    periodStart: fromSeconds(item.current_period_start),
    periodEnd: fromSeconds(item.current_period_end),
    orgId: body.metadata.org_id ?? null
  }
}

/** What the processor sent, decoded; a body that is not what was asked for is the processor's failure. */
export const decodeBody = <A, I>(schema: Schema.Schema<A, I>, what: string) => (body: unknown) =>
  Schema.decodeUnknown(schema)(body).pipe(
    Effect.mapError((e) => new ProcessorError({ message: `the payment processor's ${what} was not understood: ${e.message}` }))
  )

export interface CheckoutRequest {
  readonly orgId: string
  readonly planId: string
  readonly priceId: string
  /** The organization's customer at the processor, from an earlier subscription. */
  readonly customerId: string | null
  readonly email: string | null
  readonly successUrl: string
  readonly cancelUrl: string
  /** Two calls with the same key make one session. */
  readonly idempotencyKey: string
}

export interface PaymentProcessorShape {
  readonly name: string
  readonly configured: boolean
  readonly createCheckout: (request: CheckoutRequest) => Effect.Effect<CheckoutSession, NotConfigured | ProcessorError>
  readonly retrieveCheckout: (sessionId: string) => Effect.Effect<CheckoutSession, NotConfigured | ProcessorError>
  readonly createPortal: (customerId: string, returnUrl: string) => Effect.Effect<{ readonly url: string }, NotConfigured | ProcessorError>
  readonly retrieveSubscription: (subscriptionId: string) => Effect.Effect<Subscription, NotConfigured | ProcessorError>
  readonly cancelAtPeriodEnd: (subscriptionId: string) => Effect.Effect<Subscription, NotConfigured | ProcessorError>
  /** Verifies a callback's signature over its raw body, then decodes the event. */
  readonly verifyEvent: (payload: string, signature: string) => Effect.Effect<ProcessorEvent, NotConfigured | InvalidEvent>
}

export class PaymentProcessor extends Context.Tag("engram/payments/PaymentProcessor")<PaymentProcessor, PaymentProcessorShape>() {
  /** No processor: every call answers NotConfigured. */
  static readonly none = Layer.succeed(PaymentProcessor, {
    name: "none",
    configured: false,
    createCheckout: () => new NotConfigured(),
    retrieveCheckout: () => new NotConfigured(),
    createPortal: () => new NotConfigured(),
    retrieveSubscription: () => new NotConfigured(),
    cancelAtPeriodEnd: () => new NotConfigured(),
    verifyEvent: () => new NotConfigured()
  })
}

export { PortalBody }
