/** Billing: the organization's plan, credits and subscription (control plane: a signed-in session). */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import {
  BillingNotConfigured,
  CheckoutInProgress,
  InsufficientRole,
  InvalidPlan,
  NoSubscription,
  PaymentRequired,
  PriceNotConfigured,
  SessionRequired,
  SubscriptionExists
} from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { strict } from "./Strict.ts"

export const AvailablePlan = Schema.Struct({
  plan_id: Schema.String,
  name: Schema.String,
  price_per_month_usd: Schema.Number,
  credits: Schema.Int,
  rate_limit_per_min: Schema.Int,
  max_spaces: Schema.Int
})

export const LineItem = Schema.Struct({
  op_type: Schema.String,
  count: Schema.Int,
  unit_price: Schema.Number,
  subtotal: Schema.Int
})

export const BillingStatus = Schema.Struct({
  plan_id: Schema.String,
  plan_name: Schema.String,
  price_per_month_usd: Schema.Number,
  credits_limit: Schema.Int,
  credits_used: Schema.Int,
  credits_remaining: Schema.Int,
  credits_reset_at: Schema.String,
  rate_limit_per_min: Schema.Int,
  has_subscription: Schema.Boolean,
  /** The subscription ends at credits_reset_at (the plan and its credits stay until then). */
  cancel_at_period_end: Schema.Boolean,
  /** The plan the organization moves to at credits_reset_at (a downgrade or a cancellation), if any. */
  scheduled_plan_id: Schema.NullOr(Schema.String),
  current_month_ops: Schema.Int,
  memories_added: Schema.Int,
  searches: Schema.Int,
  insights: Schema.Int,
  line_items: Schema.Array(LineItem),
  available_plans: Schema.Array(AvailablePlan)
})

export const PlanRequest = strict(Schema.Struct({ plan_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)) }))

export const CheckoutSession = Schema.Struct({
  checkout_url: Schema.String,
  session_id: Schema.String,
  plan_id: Schema.String,
  expires_at: Schema.String
})

export const PortalSession = Schema.Struct({ portal_url: Schema.String })

export const Cancellation = Schema.Struct({
  message: Schema.String,
  cancel_at_period_end: Schema.Boolean,
  credits_reset_at: Schema.String
})

/** The payment processor's callback (Stripe's webhook), served beside the HttpApi: its signature covers the raw body. */
export const BILLING_WEBHOOK_PATH = "/v1/billing/webhook"

export class BillingApi extends HttpApiGroup.make("billing")
  .add(HttpApiEndpoint.get("status", "/v1/billing").addSuccess(BillingStatus))
  .add(
    HttpApiEndpoint.post("upgrade", "/v1/billing/upgrade")
      .setPayload(PlanRequest)
      .addSuccess(BillingStatus)
      .addError(InsufficientRole)
      .addError(InvalidPlan)
      .addError(PaymentRequired)
      .addError(SubscriptionExists)
  )
  .add(
    HttpApiEndpoint.post("checkout", "/v1/billing/checkout")
      .setPayload(PlanRequest)
      .addSuccess(CheckoutSession)
      .addError(InsufficientRole)
      .addError(InvalidPlan)
      .addError(SubscriptionExists)
      .addError(CheckoutInProgress)
      .addError(BillingNotConfigured)
      .addError(PriceNotConfigured)
  )
  .add(
    HttpApiEndpoint.post("portal", "/v1/billing/portal")
      .addSuccess(PortalSession)
      .addError(InsufficientRole)
      .addError(NoSubscription)
      .addError(BillingNotConfigured)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/billing/cancel")
      .addSuccess(Cancellation)
      .addError(InsufficientRole)
      .addError(NoSubscription)
      .addError(BillingNotConfigured)
  )
  .addError(SessionRequired)
  .middleware(Authentication)
{}
