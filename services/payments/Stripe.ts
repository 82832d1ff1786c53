/**
 * The payment processor on Stripe, through the official client. Every answer
 * is decoded to the fields billing reads; a call that fails or times out is
 * a ProcessorError (the client retries network failures itself, with the
 * idempotency keys it sends). STRIPE_API_URL points the client at another
 * address of the same API (a stand-in in tests).
 */
import { Effect, Option, Redacted } from "effect"
import Stripe from "stripe"
import type { StripeSettings } from "../../src/config/AppConfig.ts"
import {
  CheckoutSessionBody,
  decodeBody,
  EventBody,
  InvalidEvent,
  type PaymentProcessorShape,
  PortalBody,
  ProcessorError,
  SubscriptionBody,
  toCheckout,
  toSubscription
} from "./PaymentProcessor.ts"

const describe = (e: unknown) => (e instanceof Error ? e.message : String(e))

export const makeStripe = (settings: StripeSettings): PaymentProcessorShape => {
  const address = Option.match(settings.apiUrl, {
    onNone: () => ({}),
    onSome: (url) => ({
      protocol: url.protocol === "https:" ? "https" as const : "http" as const,
      host: url.hostname,
      port: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
    })
  })
  const client = new Stripe(Redacted.value(settings.secretKey), {
    ...address,
    maxNetworkRetries: 2,
    timeout: 20_000,
    telemetry: false
  })
  const webhookSecret = Redacted.value(settings.webhookSecret)

  const stripeCall = <A>(what: string, run: () => Promise<unknown>, decode: (body: unknown) => Effect.Effect<A, ProcessorError>) =>
    Effect.tryPromise({
      try: run,
      catch: (e) => new ProcessorError({ message: `the payment processor refused ${what}: ${describe(e)}` })
    }).pipe(Effect.flatMap(decode), Effect.withSpan(`Stripe.${what.replace(/ /g, "_")}`))

  const checkout = decodeBody(CheckoutSessionBody, "checkout session")
  const subscription = decodeBody(SubscriptionBody, "subscription")

  return {
    name: "stripe",
    configured: true,
    createCheckout: (request) =>
      stripeCall("checkout", () =>
        client.checkout.sessions.create({
          mode: "subscription",
          line_items: [{ price: request.priceId, quantity: 1 }],
          client_reference_id: request.orgId,
          ...(request.customerId === null
            ? request.email === null ? {} : { customer_email: request.email }
            : { customer: request.customerId }),
          metadata: { org_id: request.orgId, plan_id: request.planId },
          subscription_data: { metadata: { org_id: request.orgId, plan_id: request.planId } },
          success_url: request.successUrl,
          cancel_url: request.cancelUrl
        }, { idempotencyKey: request.idempotencyKey }), (body) => Effect.map(checkout(body), toCheckout)),
    retrieveCheckout: (sessionId) =>
      stripeCall("checkout lookup", () => client.checkout.sessions.retrieve(sessionId), (body) => Effect.map(checkout(body), toCheckout)),
    createPortal: (customerId, returnUrl) =>
      stripeCall(
        "portal",
        () => client.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }),
        (body) => Effect.map(decodeBody(PortalBody, "portal session")(body), (portal) => ({ url: portal.url }))
      ),
    retrieveSubscription: (subscriptionId) =>
      stripeCall("subscription lookup", () => client.subscriptions.retrieve(subscriptionId), (body) =>
        Effect.map(subscription(body), toSubscription)),
    cancelAtPeriodEnd: (subscriptionId) =>
      stripeCall("cancel", () => client.subscriptions.update(subscriptionId, { cancel_at_period_end: true }), (body) =>
        Effect.map(subscription(body), toSubscription)),
    verifyEvent: (payload, signature) =>
      Effect.try({
        try: () => client.webhooks.constructEvent(payload, signature, webhookSecret),
        catch: (e) => new InvalidEvent({ message: `the callback's signature does not verify: ${describe(e)}` })
      }).pipe(
        Effect.flatMap((event) => decodeBody(EventBody, "event")(event)),
        Effect.mapError((e) => e._tag === "InvalidEvent" ? e : new InvalidEvent({ message: e.message }))
      )
  }
}
