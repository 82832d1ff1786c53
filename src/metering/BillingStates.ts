/**
 * The spec's subscription and organization-plan transitions, as pure
 * functions of an organization's billing row, what the processor says about
 * its subscription, and the time. The store applies what they decide.
 *
 * | from | event | to |
 * |---|---|---|
 * | any plan | a subscription starts (checkout paid) | its plan at once; the period runs from the processor's billing anchor; unused credits carried over |
 * | paid | the processor moves it to a dearer plan | the new plan at once; unused credits added to the new allowance |
 * | paid | the processor moves it to a cheaper plan | the old plan until credits_reset_at, then the new one |
 * | paid | cancel (ours or the portal's) | the paid plan and its credits until credits_reset_at, then the default plan on the signup anniversary |
 * | paid | the processor ends the subscription (deleted, unpaid) | the default plan at once |
 */
import type { BillingRow } from "../../services/store/LedgerRepo.ts"
import type { Subscription } from "../../services/payments/PaymentProcessor.ts"
import { periodAt } from "./Periods.ts"
import type { PlanEntry, PlansShape } from "./Plans.ts"

/** What a period's end changes: a scheduled downgrade or cancellation takes effect. */
export const rollover = (row: BillingRow, defaultPlan: string, signup: Date) => {
  if (row.cancel_at_period_end) return { planId: defaultPlan, periodAnchor: signup, subscriptionId: null }
  if (row.pending_plan_id !== null && row.subscription_id !== null) {
    return { planId: row.pending_plan_id, periodAnchor: row.period_anchor, subscriptionId: row.subscription_id }
  }
  return { planId: row.plan_id, periodAnchor: row.period_anchor, subscriptionId: row.subscription_id }
}

/** Subscription statuses under which the processor keeps billing (and the plan stays paid). */
const LIVE = new Set(["active", "trialing", "past_due"])
/** Statuses that end a subscription: the organization goes back to the default plan. */
const ENDED = new Set(["canceled", "unpaid", "incomplete_expired", "paused"])

export interface BillingUpdate {
  readonly plan_id: string
  readonly period_anchor: Date
  readonly period_start: Date
  readonly credits_reset_at: Date
  readonly credits_used: number
  readonly bonus_credits: number
  readonly customer_id: string | null
  readonly subscription_id: string | null
  readonly cancel_at_period_end: boolean
  readonly pending_plan_id: string | null
  readonly processor_period_start: Date | null
}

export type Transition =
  | { readonly _tag: "Started"; readonly plan: PlanEntry; readonly update: BillingUpdate }
  | { readonly _tag: "Upgraded"; readonly plan: PlanEntry; readonly update: BillingUpdate }
  | { readonly _tag: "DowngradeScheduled"; readonly plan: PlanEntry; readonly update: BillingUpdate }
  | { readonly _tag: "Downgraded"; readonly plan: PlanEntry; readonly update: BillingUpdate }
  | { readonly _tag: "Updated"; readonly update: BillingUpdate }
  | { readonly _tag: "Ended"; readonly update: BillingUpdate }
  /** Nothing to change: not this organization's subscription, not paid yet, or a price no plan lists. */
  | { readonly _tag: "Ignored"; readonly reason: string }

/** The row as an update that changes nothing (transitions override the fields they change). */
export const same = (row: BillingRow): BillingUpdate => ({
  plan_id: row.plan_id,
  period_anchor: row.period_anchor,
  period_start: row.period_start,
  credits_reset_at: row.credits_reset_at,
  credits_used: row.credits_used,
  bonus_credits: row.bonus_credits,
  customer_id: row.customer_id,
  subscription_id: row.subscription_id,
  cancel_at_period_end: row.cancel_at_period_end,
  pending_plan_id: row.pending_plan_id,
  processor_period_start: row.processor_period_start
})

/** What is left of the current allowance; it moves to the next plan's allowance. */
const unused = (row: BillingRow, plans: PlansShape) =>
  Math.max(0, plans.of(row.plan_id).credits + row.bonus_credits - row.credits_used)

/** The organization's plan when the processor's subscription is in `sub`'s state. */
export const applySubscription = (
  row: BillingRow,
  sub: Subscription,
  plans: PlansShape,
  now: Date,
  signup: Date
): Transition => {
  const ours = row.subscription_id === sub.subscriptionId
  if (ENDED.has(sub.status)) {
    if (!ours) return { _tag: "Ignored", reason: `subscription ${sub.subscriptionId} is not this organization's current one` }
    const period = periodAt(signup, now)
    return {
      _tag: "Ended",
      update: {
        ...same(row),
        plan_id: plans.defaultPlan.plan_id,
        period_anchor: signup,
        period_start: now,
        credits_reset_at: period.end,
        credits_used: 0,
        bonus_credits: 0,
        subscription_id: null,
        cancel_at_period_end: false,
        pending_plan_id: null,
        processor_period_start: null
      }
    }
  }
  if (!LIVE.has(sub.status)) return { _tag: "Ignored", reason: `subscription status ${sub.status} is not paid yet` }
  const plan = plans.byPrice(sub.priceId)
  if (plan === undefined) return { _tag: "Ignored", reason: `no plan lists the price ${sub.priceId}` }

  if (!ours) {
    // A new subscription (a completed checkout): its plan now, on the processor's billing day.
    const period = periodAt(sub.billingCycleAnchor, now)
    return {
      _tag: "Started",
      plan,
      update: {
        plan_id: plan.plan_id,
        period_anchor: sub.billingCycleAnchor,
        period_start: now,
        credits_reset_at: period.end,
        credits_used: 0,
        bonus_credits: unused(row, plans),
        customer_id: sub.customerId,
        subscription_id: sub.subscriptionId,
        cancel_at_period_end: sub.cancelAtPeriodEnd,
        pending_plan_id: null,
        processor_period_start: sub.periodStart
      }
    }
  }

  const flags = {
    ...same(row),
    customer_id: sub.customerId,
    cancel_at_period_end: sub.cancelAtPeriodEnd,
    processor_period_start: sub.periodStart
  }
  const current = plans.of(row.plan_id)
  if (plan.plan_id === current.plan_id) return { _tag: "Updated", update: { ...flags, pending_plan_id: null } }
  if (plan.price_per_month_usd > current.price_per_month_usd) {
    return {
      _tag: "Upgraded",
      plan,
      update: { ...flags, plan_id: plan.plan_id, period_start: now, credits_used: 0, bonus_credits: unused(row, plans), pending_plan_id: null }
    }
  }
  // Cheaper: from the period's end. A change that comes with a new processor period is that end (a scheduled
  // downgrade taking effect at renewal); one within the same period waits for it.
  const renewal = row.processor_period_start !== null && sub.periodStart.getTime() > row.processor_period_start.getTime()
  if (renewal) return { _tag: "Downgraded", plan, update: { ...flags, plan_id: plan.plan_id, pending_plan_id: null } }
  return { _tag: "DowngradeScheduled", plan, update: { ...flags, pending_plan_id: plan.plan_id } }
}
