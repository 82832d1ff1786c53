/**
 * Billing: the organization's plan and credits as the spec's billing status,
 * a free plan chosen directly, a paid plan bought through the payment
 * processor's checkout, its portal, cancellation at the period's end, and the
 * processor's callbacks that flip the plan (each event applied once).
 */
import { Clock, Effect, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { NotConfigured, PaymentProcessor, ProcessorError, type Subscription } from "../../services/payments/PaymentProcessor.ts"
import { CheckoutSessionBody, decodeBody, SubscriptionBody } from "../../services/payments/PaymentProcessor.ts"
import { BillingRepo } from "../../services/store/BillingRepo.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { storeFailure } from "../../services/store/SqlFailure.ts"
import {
  BadRequest,
  BillingNotConfigured,
  CheckoutInProgress,
  InvalidPlan,
  NoSubscription,
  PaymentRequired,
  PriceNotConfigured,
  ServiceUnavailable,
  SubscriptionExists
} from "../domain/Errors.ts"
import { applySubscription, same } from "./BillingStates.ts"
import { monthStart } from "./Periods.ts"
import { Metering } from "./Metering.ts"
import { type PlanEntry, Plans } from "./Plans.ts"
import { RATES } from "./Rates.ts"

const notConfigured = () =>
  new BillingNotConfigured({
    message: "billing is not configured on this deployment (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET)"
  })

/** The processor's failures as the API's: not configured is 503 billing_not_configured; a refusal or no answer is 503. */
const processorFailure = <A, R>(effect: Effect.Effect<A, NotConfigured | ProcessorError, R>) =>
  effect.pipe(
    Effect.catchTags({
      NotConfigured: () => Effect.fail(notConfigured()),
      ProcessorError: (e) =>
        Effect.logError("payment processor call failed", e.message).pipe(
          Effect.zipRight(Effect.fail(new ServiceUnavailable({ message: "the payment processor did not complete the call; try again shortly" })))
        )
    })
  )

const FIXED_RATES: Readonly<Record<string, number>> = RATES

const isPaid = (plan: PlanEntry) => plan.price_per_month_usd > 0

/** The events that can change a plan; every other event is acknowledged and left alone. */
const SUBSCRIPTION_EVENTS = new Set([
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.paused",
  "customer.subscription.resumed"
])

export class Billing extends Effect.Service<Billing>()("engram/metering/Billing", {
  dependencies: [LedgerRepo.Default, BillingRepo.Default, Plans.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const ledger = yield* LedgerRepo
    const repo = yield* BillingRepo
    const plans = yield* Plans
    const metering = yield* Metering
    const processor = yield* PaymentProcessor
    const config = yield* AppConfig

    const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    const publicUrl = Option.getOrElse(config.publicUrl, () => `http://localhost:${config.port}`)

    const current = (orgId: string) => Effect.flatMap(nowDate, (now) => ledger.current(orgId, now, plans.defaultPlan.plan_id))

    const planView = (plan: PlanEntry) => ({
      plan_id: plan.plan_id,
      name: plan.name,
      price_per_month_usd: plan.price_per_month_usd,
      credits: plan.credits,
      rate_limit_per_min: plan.rate_limit_per_min,
      max_spaces: plan.max_spaces
    })

    /** The spec's billing status; counts over the calendar month to date. */
    const status = (orgId: string) =>
      Effect.gen(function*() {
        // The plan, period and balance exactly as metering reads them for every request.
        const { limit, now, plan, remaining, row } = yield* metering.account(orgId)
        const totals = yield* ledger.totals(orgId, monthStart(now), new Date(now.getTime() + 1))
        const count = (op: string) => totals.find((t) => t.op_type === op)?.quantity ?? 0
        const lineItems = totals.map((t) => {
          const fixed = Object.hasOwn(FIXED_RATES, t.op_type) ? FIXED_RATES[t.op_type] : undefined
          // Model tokens are priced per call at each model's rates: the count is the calls, the price their average.
          const units = fixed === undefined ? t.entries : t.quantity
          return {
            op_type: t.op_type,
            count: units,
            unit_price: fixed ?? (units === 0 ? 0 : Math.round((t.credits / units) * 100) / 100),
            subtotal: t.credits
          }
        })
        return {
          plan_id: plan.plan_id,
          plan_name: plan.name,
          price_per_month_usd: plan.price_per_month_usd,
          credits_limit: limit,
          credits_used: row.credits_used,
          credits_remaining: remaining,
          credits_reset_at: row.credits_reset_at.toISOString(),
          rate_limit_per_min: plan.rate_limit_per_min,
          has_subscription: row.subscription_id !== null,
          cancel_at_period_end: row.cancel_at_period_end,
          scheduled_plan_id: row.cancel_at_period_end ? plans.defaultPlan.plan_id : row.pending_plan_id,
          current_month_ops: totals.filter((t) => t.op_type !== "model_tokens").reduce((n, t) => n + t.entries, 0),
          memories_added: count("memory_stored"),
          searches: count("search"),
          insights: count("insight"),
          line_items: lineItems,
          available_plans: plans.all.map(planView)
        }
      }).pipe(Effect.withSpan("Billing.status", { attributes: { orgId } }))

    const findPlan = (planId: string) =>
      Option.match(plans.find(planId), {
        onNone: () => Effect.fail(new InvalidPlan({ message: `there is no plan ${planId}; GET /v1/billing lists available_plans` })),
        onSome: Effect.succeed
      })

    /** A free plan, at once; a paid one needs checkout, and an active subscription must end first. */
    const upgrade = (orgId: string, planId: string) =>
      Effect.gen(function*() {
        const plan = yield* findPlan(planId)
        if (isPaid(plan)) {
          return yield* new PaymentRequired({ message: `${plan.plan_id} is a paid plan: start it with POST /v1/billing/checkout` })
        }
        yield* current(orgId)
        const now = yield* nowDate
        yield* repo.transaction(Effect.gen(function*() {
          const row = Option.getOrThrow(yield* repo.lock(orgId))
          if (row.subscription_id !== null) {
            return yield* new SubscriptionExists({
              message: row.cancel_at_period_end
                ? `the subscription is canceled and ends on ${row.credits_reset_at.toISOString()}; the organization moves to ` +
                  `${plans.defaultPlan.plan_id} then`
                : "a paid subscription is active: cancel it first (POST /v1/billing/cancel), or change plans in the portal"
            })
          }
          yield* repo.save(orgId, { ...same(row), plan_id: plan.plan_id, cancel_at_period_end: false, pending_plan_id: null }, now)
        }))
        yield* Effect.logInfo("plan changed", { orgId, plan: plan.plan_id })
        return yield* status(orgId)
      }).pipe(Effect.withSpan("Billing.upgrade", { attributes: { orgId, planId } }))

    /** A checkout session for a paid plan; a repeat for the same plan returns the same session. */
    const checkout = (orgId: string, planId: string) =>
      Effect.gen(function*() {
        const plan = yield* findPlan(planId)
        if (!isPaid(plan)) {
          return yield* new InvalidPlan({ message: `${plan.plan_id} is free: choose it with POST /v1/billing/upgrade` })
        }
        if (!processor.configured) return yield* notConfigured()
        if (plan.stripe_price_id === undefined) {
          return yield* new PriceNotConfigured({ message: `the plan ${plan.plan_id} has no stripe_price_id in the plans file` })
        }
        const row = yield* current(orgId)
        if (row.subscription_id !== null) {
          return yield* new SubscriptionExists({ message: "a subscription is active: change plans in the portal (POST /v1/billing/portal)" })
        }
        const now = yield* nowDate
        const open = yield* repo.openCheckout(orgId, now)
        if (Option.isSome(open)) {
          if (open.value.plan_id === plan.plan_id) {
            return { checkout_url: open.value.url, session_id: open.value.session_id, plan_id: plan.plan_id, expires_at: open.value.expires_at.toISOString() }
          }
          return yield* new CheckoutInProgress({
            message: `a checkout for ${open.value.plan_id} is open until ${open.value.expires_at.toISOString()}; ` +
              "complete it, or wait for it to expire"
          })
        }
        // Concurrent first calls share one key (the count of earlier checkouts), so the processor makes one session for them.
        const earlier = yield* repo.checkoutCount(orgId)
        const session = yield* processorFailure(processor.createCheckout({
          orgId,
          planId: plan.plan_id,
          priceId: plan.stripe_price_id,
          customerId: row.customer_id,
          email: null,
          successUrl: `${publicUrl}/?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
          cancelUrl: `${publicUrl}/?checkout=canceled`,
          idempotencyKey: `checkout:${orgId}:${plan.plan_id}:${earlier}`
        }))
        yield* repo.insertCheckout({
          session_id: session.sessionId,
          org_id: orgId,
          plan_id: plan.plan_id,
          url: session.url,
          status: "open",
          created_at: now,
          expires_at: session.expiresAt
        })
        yield* Effect.logInfo("checkout opened", { orgId, plan: plan.plan_id, session: session.sessionId })
        return { checkout_url: session.url, session_id: session.sessionId, plan_id: plan.plan_id, expires_at: session.expiresAt.toISOString() }
      }).pipe(Effect.withSpan("Billing.checkout", { attributes: { orgId, planId } }))

    const portal = (orgId: string) =>
      Effect.gen(function*() {
        if (!processor.configured) return yield* notConfigured()
        const row = yield* current(orgId)
        if (row.customer_id === null) {
          return yield* new NoSubscription({ message: "the portal needs a subscription: start one with POST /v1/billing/checkout" })
        }
        const portal = yield* processorFailure(processor.createPortal(row.customer_id, `${publicUrl}/`))
        return { portal_url: portal.url }
      }).pipe(Effect.withSpan("Billing.portal", { attributes: { orgId } }))

    /** Cancels at the period's end: the paid plan and its credits stay until credits_reset_at. */
    const cancel = (orgId: string) =>
      Effect.gen(function*() {
        if (!processor.configured) return yield* notConfigured()
        const row = yield* current(orgId)
        if (row.subscription_id === null) {
          return yield* new NoSubscription({ message: "there is no subscription to cancel" })
        }
        if (!row.cancel_at_period_end) {
          yield* processorFailure(processor.cancelAtPeriodEnd(row.subscription_id))
          yield* repo.markCanceling(orgId, yield* nowDate)
          yield* Effect.logInfo("subscription canceled at period end", { orgId, subscription: row.subscription_id })
        }
        const ends = row.credits_reset_at.toISOString()
        return {
          message: `the subscription is canceled; the ${plans.of(row.plan_id).name} plan and its credits stay until ${ends}, ` +
            `then the organization moves to the ${plans.defaultPlan.name} plan`,
          cancel_at_period_end: true,
          credits_reset_at: ends
        }
      }).pipe(Effect.withSpan("Billing.cancel", { attributes: { orgId } }))

    /** One event applied in one transaction with its id, so a redelivery changes nothing. */
    const apply = (eventId: string, eventType: string, orgId: string, sub: Subscription) =>
      Effect.gen(function*() {
        yield* current(orgId)
        const now = yield* nowDate
        const signup = yield* ledger.signedUp(orgId, now)
        return yield* repo.transaction(Effect.gen(function*() {
          if (!(yield* repo.claimEvent(eventId, eventType, orgId, now))) return "duplicate"
          const row = yield* repo.lock(orgId)
          if (Option.isNone(row)) return "unknown organization"
          const transition = applySubscription(row.value, sub, plans, now, signup)
          if (transition._tag === "Ignored") {
            yield* Effect.logWarning("processor event left alone", { eventId, eventType, orgId, reason: transition.reason })
            return "ignored"
          }
          yield* repo.save(orgId, transition.update, now)
          yield* Effect.logInfo("billing transition", {
            eventId,
            orgId,
            transition: transition._tag,
            plan: transition.update.plan_id,
            pending: transition.update.pending_plan_id
          })
          return transition._tag
        }))
      })

    /** The organization a subscription belongs to: its metadata, else the one that holds it or its customer. */
    const ownerOf = (sub: Subscription) =>
      sub.orgId !== null ? Effect.succeed(Option.some(sub.orgId)) : repo.orgOfSubscription(sub.subscriptionId).pipe(
        Effect.flatMap((found) => Option.isSome(found) ? Effect.succeed(found) : repo.orgOfCustomer(sub.customerId)),
        storeFailure
      )

    /** A callback from the processor: verified on its raw body, then applied once. */
    const receive = (payload: string, signature: string | undefined) =>
      Effect.gen(function*() {
        if (!processor.configured) return yield* notConfigured()
        if (signature === undefined) return yield* new BadRequest({ message: "the callback has no Stripe-Signature header" })
        const event = yield* processor.verifyEvent(payload, signature).pipe(
          Effect.catchTags({
            NotConfigured: () => Effect.fail(notConfigured()),
            InvalidEvent: (e) => Effect.fail(new BadRequest({ message: e.message }))
          })
        )
        yield* Effect.annotateCurrentSpan({ eventId: event.id, eventType: event.type })
        const object = event.data.object
        if (event.type === "checkout.session.completed" || event.type === "checkout.session.expired") {
          const session = yield* processorFailure(decodeBody(CheckoutSessionBody, "checkout session")(object))
          if (event.type === "checkout.session.expired") {
            yield* storeFailure(repo.setCheckoutStatus(session.id, "expired"))
            return { received: true, outcome: "checkout expired" }
          }
          yield* storeFailure(repo.setCheckoutStatus(session.id, "complete"))
          const orgId = session.metadata?.org_id ?? session.client_reference_id
          if (session.subscription === null || orgId == null) return { received: true, outcome: "ignored" }
          const sub = yield* processorFailure(processor.retrieveSubscription(session.subscription))
          return { received: true, outcome: yield* apply(event.id, event.type, orgId, sub) }
        }
        if (SUBSCRIPTION_EVENTS.has(event.type)) {
          const sent = yield* processorFailure(decodeBody(SubscriptionBody, "subscription")(object))
          // The subscription as it is now: events can arrive late or out of order.
          const sub = yield* processorFailure(processor.retrieveSubscription(sent.id))
          const orgId = yield* ownerOf(sub)
          if (Option.isNone(orgId)) {
            yield* Effect.logWarning("processor event for an unknown subscription", { eventId: event.id, subscription: sent.id })
            return { received: true, outcome: "ignored" }
          }
          return { received: true, outcome: yield* apply(event.id, event.type, orgId.value, sub) }
        }
        return { received: true, outcome: "ignored" }
      }).pipe(Effect.withSpan("Billing.receive"))

    return { status, upgrade, checkout, portal, cancel, receive }
  })
}) {}
