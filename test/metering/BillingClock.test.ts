/**
 * The subscription and organization-plan transitions of the spec on the
 * TestClock, through the Billing service of a whole node (the official
 * Stripe client against the stand-in): the free plan's periods on the signup
 * anniversary with the short-month rule, a paid plan's periods on the
 * processor's billing day, an upgrade at once with unused credits added, a
 * downgrade at the period's end, a cancellation keeping the paid plan until
 * credits_reset_at and then going back to the signup anniversary.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option, Redacted, TestClock } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Accounts } from "../../src/identity/Accounts.ts"
import { Billing } from "../../src/metering/Billing.ts"
import { Metering } from "../../src/metering/Metering.ts"
import { uniqueEmail } from "../support/Http.ts"
import { profiles } from "../support/Profiles.ts"
import { STAND_IN_SECRET_KEY, STAND_IN_WEBHOOK_SECRET, type SignedEvent, StripeStandIn } from "../support/StripeStandIn.ts"
import { onTestClock } from "../support/TestClockNode.ts"

const plansPath = join(mkdtempSync(join(tmpdir(), "engram-billing-clock-")), "plans.json")
writeFileSync(plansPath, JSON.stringify({
  default_plan: "free",
  plans: [
    { plan_id: "free", name: "Free", price_per_month_usd: 0, credits: 100, rate_limit_per_min: 1000, max_spaces: 5 },
    { plan_id: "pro", name: "Pro", price_per_month_usd: 49, credits: 1000, rate_limit_per_min: 2000, max_spaces: 50, stripe_price_id: "price_pro" },
    { plan_id: "scale", name: "Scale", price_per_month_usd: 199, credits: 5000, rate_limit_per_min: 5000, max_spaces: 500, stripe_price_id: "price_scale" }
  ]
}))

const standIn = await StripeStandIn.start(["price_pro", "price_scale"])
afterAll(() => standIn.close())

const overrides = {
  plansConfig: Option.some(plansPath),
  consolidation: false,
  stripe: Option.some({
    secretKey: Redacted.make(STAND_IN_SECRET_KEY),
    webhookSecret: Redacted.make(STAND_IN_WEBHOOK_SECRET),
    apiUrl: Option.some(new URL(standIn.url))
  })
}

const at = (iso: string) => TestClock.setTime(Date.parse(iso))

for (const profile of profiles) {
  describe(`billing periods on the TestClock [${profile.name}]`, () => {
    it.scoped("free anniversary, paid billing day, upgrade, downgrade at period end, cancel", () =>
      onTestClock(profile, overrides, Effect.gen(function*() {
        const billing = yield* Billing
        const accounts = yield* Accounts
        const metering = yield* Metering
        const deliver = (event: SignedEvent) => billing.receive(event.payload, event.signature)

        // Signed up on January 31st: the free periods end on the 31st, or a short month's last day.
        yield* at("2027-01-31T10:00:00Z")
        const orgId = (yield* accounts.signup({ email: uniqueEmail("clock"), password: "correct horse battery", orgName: "Clock" })).org_id
        expect((yield* billing.status(orgId)).credits_reset_at).toBe("2027-02-28T10:00:00.000Z")
        yield* metering.charge(orgId, "insight")
        expect(yield* billing.status(orgId)).toMatchObject({ credits_used: 5, credits_remaining: 95 })
        yield* at("2027-02-28T10:00:00Z")
        expect(yield* billing.status(orgId)).toMatchObject({ credits_reset_at: "2027-03-31T10:00:00.000Z", credits_used: 0 })

        // Pro bought on March 31st at noon: billed on the 31st (April's period ends on the 30th), free credits carried.
        yield* at("2027-03-31T12:00:00Z")
        const session = yield* billing.checkout(orgId, "pro")
        const paid = standIn.complete(session.session_id, new Date("2027-03-31T12:00:00Z"))
        for (const event of paid.events) yield* deliver(event)
        expect(yield* billing.status(orgId)).toMatchObject({
          plan_id: "pro",
          has_subscription: true,
          credits_limit: 1100,
          credits_reset_at: "2027-04-30T12:00:00.000Z"
        })

        // Upgraded on April 10th: scale at once, unused credits (1100 - 5) added.
        yield* at("2027-04-10T00:00:00Z")
        yield* metering.charge(orgId, "insight")
        yield* deliver(standIn.changePrice(paid.subscriptionId, "price_scale"))
        expect(yield* billing.status(orgId)).toMatchObject({ plan_id: "scale", credits_limit: 5000 + 1095, credits_used: 0 })

        // Downgraded on April 15th: scale until April 30th, then pro with its own allowance.
        yield* at("2027-04-15T00:00:00Z")
        yield* deliver(standIn.changePrice(paid.subscriptionId, "price_pro"))
        expect(yield* billing.status(orgId)).toMatchObject({ plan_id: "scale", scheduled_plan_id: "pro", credits_limit: 6095 })
        yield* at("2027-04-30T11:59:59Z")
        expect((yield* billing.status(orgId)).plan_id).toBe("scale")
        yield* at("2027-04-30T12:00:00Z")
        expect(yield* billing.status(orgId)).toMatchObject({
          plan_id: "pro",
          scheduled_plan_id: null,
          credits_limit: 1000,
          credits_used: 0,
          credits_reset_at: "2027-05-31T12:00:00.000Z"
        })
        // Stripe's own renewal, a little later, changes nothing more.
        yield* at("2027-04-30T12:00:05Z")
        yield* deliver(standIn.renew(paid.subscriptionId))
        expect(yield* billing.status(orgId)).toMatchObject({ plan_id: "pro", credits_limit: 1000, credits_reset_at: "2027-05-31T12:00:00.000Z" })

        // Canceled on May 5th: pro and its credits until May 31st, then free on the signup anniversary.
        yield* at("2027-05-05T00:00:00Z")
        yield* billing.cancel(orgId)
        expect(yield* billing.status(orgId)).toMatchObject({ plan_id: "pro", cancel_at_period_end: true, scheduled_plan_id: "free" })
        yield* at("2027-05-31T11:00:00Z")
        expect((yield* billing.status(orgId)).plan_id).toBe("pro")
        yield* at("2027-05-31T12:00:00Z")
        expect(yield* billing.status(orgId)).toMatchObject({
          plan_id: "free",
          has_subscription: false,
          cancel_at_period_end: false,
          credits_limit: 100,
          credits_reset_at: "2027-06-30T10:00:00.000Z"
        })
        // The processor's deletion at the end changes nothing more.
        yield* deliver(standIn.end(paid.subscriptionId))
        expect((yield* billing.status(orgId)).plan_id).toBe("free")
        yield* at("2027-07-01T00:00:00Z")
        expect((yield* billing.status(orgId)).credits_reset_at).toBe("2027-07-31T10:00:00.000Z")
      })))
  })
}
