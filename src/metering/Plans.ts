/**
 * The plans an organization can be on: price, monthly credits, requests per
 * minute, spaces. From the operator's PLANS_CONFIG file (JSON) or the
 * built-in three; a missing, unreadable or invalid file stops start-up.
 */
import { Data, Effect, Option, Schema } from "effect"
import { readFileSync } from "node:fs"
import { AppConfig } from "../config/AppConfig.ts"

const PlanId = Schema.String.pipe(Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/))

export const PlanEntry = Schema.Struct({
  plan_id: PlanId,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  price_per_month_usd: Schema.Number.pipe(Schema.nonNegative()),
  credits: Schema.Int.pipe(Schema.nonNegative()),
  rate_limit_per_min: Schema.Int.pipe(Schema.between(1, 10_000_000)),
  max_spaces: Schema.Int.pipe(Schema.between(1, 10_000_000)),
  /** The payment processor's price id (Stripe `price_…`); a paid plan without one cannot be checked out. */
  stripe_price_id: Schema.optional(Schema.String.pipe(Schema.minLength(1)))
})
export type PlanEntry = typeof PlanEntry.Type

export const PlansFile = Schema.Struct({
  /** The plan of a new organization, and of one whose plan the file no longer lists. Must be free. */
  default_plan: PlanId,
  plans: Schema.Array(PlanEntry).pipe(Schema.minItems(1))
})
export type PlansFile = typeof PlansFile.Type

/**
 * Sized for a self-hosted deployment, where the operator is the customer: a
 * bulk load on a laptop does not meet them. An operator who sells plans
 * writes a PLANS_CONFIG of its own (docs/metering.md).
 */
export const BUILT_IN_PLANS: PlansFile = {
  default_plan: "free",
  plans: [
    { plan_id: "free", name: "Free", price_per_month_usd: 0, credits: 1_000_000, rate_limit_per_min: 12_000, max_spaces: 1_000 },
    { plan_id: "pro", name: "Pro", price_per_month_usd: 49, credits: 10_000_000, rate_limit_per_min: 30_000, max_spaces: 10_000 },
    { plan_id: "scale", name: "Scale", price_per_month_usd: 199, credits: 100_000_000, rate_limit_per_min: 100_000, max_spaces: 100_000 }
  ]
}

export class PlansError extends Data.TaggedError("PlansError")<{ readonly message: string }> {}

export interface PlansShape {
  readonly all: ReadonlyArray<PlanEntry>
  readonly defaultPlan: PlanEntry
  readonly find: (planId: string) => Option.Option<PlanEntry>
  /** The plan an organization is on: its own, or the default when the file no longer lists it. */
  readonly of: (planId: string) => PlanEntry
  /** The plan sold at the processor's price `priceId`. */
  readonly byPrice: (priceId: string) => PlanEntry | undefined
}

/** Checks what a schema cannot: unique ids, a default that exists and is free. */
export const makePlans = (file: PlansFile): Effect.Effect<PlansShape, PlansError> =>
  Effect.gen(function*() {
    const byId = new Map<string, PlanEntry>()
    const byPrice = new Map<string, PlanEntry>()
    for (const plan of file.plans) {
      if (byId.has(plan.plan_id)) return yield* new PlansError({ message: `the plan id ${plan.plan_id} is listed twice` })
      byId.set(plan.plan_id, plan)
      if (plan.stripe_price_id === undefined) continue
      if (plan.price_per_month_usd === 0) {
        return yield* new PlansError({ message: `the free plan ${plan.plan_id} cannot have a stripe_price_id` })
      }
      if (byPrice.has(plan.stripe_price_id)) {
        return yield* new PlansError({ message: `the price ${plan.stripe_price_id} is given to two plans` })
      }
      byPrice.set(plan.stripe_price_id, plan)
    }
    const defaultPlan = byId.get(file.default_plan)
    if (defaultPlan === undefined) {
      return yield* new PlansError({ message: `default_plan ${file.default_plan} is not one of the plans` })
    }
    if (defaultPlan.price_per_month_usd !== 0) {
      return yield* new PlansError({ message: `default_plan ${file.default_plan} must be free (price_per_month_usd 0)` })
    }
    return {
      all: file.plans,
      defaultPlan,
      find: (planId) => Option.fromNullable(byId.get(planId)),
      of: (planId) => byId.get(planId) ?? defaultPlan,
      byPrice: (priceId) => byPrice.get(priceId)
    }
  })

export class Plans extends Effect.Service<Plans>()("engram/metering/Plans", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isNone(config.plansConfig)) return yield* makePlans(BUILT_IN_PLANS)
    const path = config.plansConfig.value
    const raw = yield* Effect.try({
      try: (): unknown => JSON.parse(readFileSync(path, "utf8")),
      catch: (e) => new PlansError({ message: `PLANS_CONFIG ${path}: ${e instanceof Error ? e.message : String(e)}` })
    })
    const file = yield* Schema.decodeUnknown(PlansFile)(raw, { errors: "all", onExcessProperty: "error" }).pipe(
      Effect.mapError((e) => new PlansError({ message: `PLANS_CONFIG ${path}: ${e.message}` }))
    )
    return yield* makePlans(file).pipe(Effect.mapError((e) => new PlansError({ message: `PLANS_CONFIG ${path}: ${e.message}` })))
  })
}) {}
