/**
 * Billing over real HTTP on both profiles, with the official Stripe client
 * talking to a local stand-in of the Stripe API: the status fields, roles,
 * the documented 400/409/503 codes, checkout (a repeat returns the same
 * session), the signed callbacks flipping the plan once per event, the
 * portal, plan changes, cancellation at the period's end, and a deployment
 * without a processor.
 */
import { afterAll, expect } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { addMember, call, callRaw, createKey, signup } from "../support/Http.ts"
import { STAND_IN_SECRET_KEY, STAND_IN_WEBHOOK_SECRET, type SignedEvent, StripeStandIn } from "../support/StripeStandIn.ts"
import { eachProfile } from "../support/Suite.ts"

const PLANS = [
  { plan_id: "starter", name: "Starter", price_per_month_usd: 0, credits: 100, rate_limit_per_min: 1000, max_spaces: 5 },
  { plan_id: "hobby", name: "Hobby", price_per_month_usd: 0, credits: 300, rate_limit_per_min: 1000, max_spaces: 5 },
  { plan_id: "pro", name: "Pro", price_per_month_usd: 49, credits: 1000, rate_limit_per_min: 2000, max_spaces: 50, stripe_price_id: "price_pro" },
  { plan_id: "scale", name: "Scale", price_per_month_usd: 199, credits: 5000, rate_limit_per_min: 5000, max_spaces: 500, stripe_price_id: "price_scale" },
  { plan_id: "team", name: "Team", price_per_month_usd: 99, credits: 2000, rate_limit_per_min: 3000, max_spaces: 100 }
]
const plansPath = join(mkdtempSync(join(tmpdir(), "engram-billing-")), "plans.json")
writeFileSync(plansPath, JSON.stringify({ default_plan: "starter", plans: PLANS }))

const standIn = await StripeStandIn.start(["price_pro", "price_scale"])
afterAll(() => standIn.close())

const stripe = Option.some({
  secretKey: Redacted.make(STAND_IN_SECRET_KEY),
  webhookSecret: Redacted.make(STAND_IN_WEBHOOK_SECRET),
  apiUrl: Option.some(new URL(standIn.url))
})

const deliver = (event: SignedEvent) =>
  call("POST", "/v1/billing/webhook", { raw: event.payload, headers: { "content-type": "application/json", "stripe-signature": event.signature } })

const status = (token: string) => call("GET", "/v1/billing", { token }).pipe(Effect.map((r) => r.body))

eachProfile("billing with the Stripe client and a stand-in of its API", (it) => {
  it.effect("status carries every field of the spec; members read it, keys may not", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const reply = yield* call("GET", "/v1/billing", { token: owner.token })
      expect(reply.status, reply.text).toBe(200)
      expect(Object.keys(reply.body).sort()).toEqual([
        "available_plans", "cancel_at_period_end", "credits_limit", "credits_remaining", "credits_reset_at", "credits_used",
        "current_month_ops", "has_subscription", "insights", "line_items", "memories_added", "plan_id", "plan_name",
        "price_per_month_usd", "rate_limit_per_min", "scheduled_plan_id", "searches"
      ])
      expect(reply.body).toMatchObject({
        plan_id: "starter",
        plan_name: "Starter",
        price_per_month_usd: 0,
        credits_limit: 100,
        credits_used: 0,
        credits_remaining: 100,
        rate_limit_per_min: 1000,
        has_subscription: false,
        current_month_ops: 0,
        line_items: []
      })
      expect(reply.body.available_plans).toEqual(PLANS.map(({ stripe_price_id: _price, ...plan }) => plan))
      // The free plan's period ends on the signup anniversary (a month on).
      const resetAt = new Date(reply.body.credits_reset_at)
      const now = new Date()
      expect(resetAt.getTime()).toBeGreaterThan(now.getTime() + 27 * 86_400_000)
      expect(resetAt.getTime()).toBeLessThanOrEqual(now.getTime() + 31 * 86_400_000)

      // Line items and counts over the calendar month: a record and a search.
      const key = (yield* createKey(owner.token)).raw_key
      const wrote = yield* call("POST", "/v1/record", { token: key, json: { space_id: "bill", content: "Tove repairs antique clocks in Bergen." } })
      expect(wrote.status, wrote.text).toBe(200)
      const stored = wrote.body.memories.length
      expect((yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: "bill", query: "clocks" } })).status).toBe(200)
      const after = yield* status(owner.token)
      expect(after).toMatchObject({ memories_added: stored, searches: 1, insights: 0, credits_used: 2 * stored + 1, current_month_ops: 2 })
      expect(after.line_items).toEqual(expect.arrayContaining([
        { op_type: "memory_stored", count: stored, unit_price: 2, subtotal: 2 * stored },
        { op_type: "search", count: 1, unit_price: 1, subtotal: 1 }
      ]))

      const member = yield* addMember(owner, "member")
      expect((yield* call("GET", "/v1/billing", { token: member.token })).status).toBe(200)
      const byKey = yield* call("GET", "/v1/billing", { token: key })
      expect(byKey.status).toBe(401)
      expect(byKey.body.error.code).toBe("session_required")
      expect(byKey.body.error.request_id).toBe(byKey.headers["x-request-id"])
    }))

  it.effect("roles: members may not change billing; admins may, but only the owner cancels", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const member = yield* addMember(owner, "member")
      const admin = yield* addMember(owner, "admin")
      for (const [path, json] of [["/v1/billing/upgrade", { plan_id: "hobby" }], ["/v1/billing/checkout", { plan_id: "pro" }], ["/v1/billing/portal", undefined], ["/v1/billing/cancel", undefined]] as const) {
        const reply = yield* callRaw("POST", path, { token: member.token, ...(json === undefined ? {} : { json }) })
        expect(reply.status, path).toBe(403)
        expect(reply.body.error.code).toBe("insufficient_role")
      }
      const cancel = yield* call("POST", "/v1/billing/cancel", { token: admin.token })
      expect(cancel.status).toBe(403)
      expect(cancel.body.error.code).toBe("insufficient_role")
      const upgraded = yield* call("POST", "/v1/billing/upgrade", { token: admin.token, json: { plan_id: "hobby" } })
      expect(upgraded.status, upgraded.text).toBe(200)
      expect(upgraded.body).toMatchObject({ plan_id: "hobby", credits_limit: 300, has_subscription: false })
      // Its rate limit and credits are what every response reports from now on.
      const key = (yield* createKey(owner.token)).raw_key
      const usage = yield* call("GET", "/v1/usage/me", { token: key })
      expect(usage.body).toMatchObject({ credits_limit: 300, rate_limit_per_min: 1000 })
    }))

  it.effect("bad plans and bodies get the documented codes", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const expectCode = (reply: { status: number; body: any; text: string }, status: number, code: string) => {
        expect(reply.status, reply.text).toBe(status)
        expect(reply.body.error.code).toBe(code)
      }
      expectCode(yield* call("POST", "/v1/billing/upgrade", { token: owner.token, json: { plan_id: "pro" } }), 400, "payment_required")
      expectCode(yield* call("POST", "/v1/billing/upgrade", { token: owner.token, json: { plan_id: "platinum" } }), 400, "invalid_plan")
      expectCode(yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "hobby" } }), 400, "invalid_plan")
      expectCode(yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "platinum" } }), 400, "invalid_plan")
      expectCode(yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "team" } }), 503, "price_not_configured")
      expectCode(yield* call("POST", "/v1/billing/checkout", { token: owner.token, offContract: {} }), 400, "bad_request")
      expectCode(yield* call("POST", "/v1/billing/checkout", { token: owner.token, offContract: { plan_id: "pro", coupon: "x" } }), 422, "validation_error")
      expectCode(yield* call("POST", "/v1/billing/portal", { token: owner.token }), 400, "no_subscription")
      expectCode(yield* call("POST", "/v1/billing/cancel", { token: owner.token }), 400, "no_subscription")
    }))

  it.effect("checkout, the processor's callbacks, the portal, plan changes and cancellation", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const first = yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "pro" } })
      expect(first.status, first.text).toBe(200)
      expect(first.body.checkout_url).toMatch(/^https:\/\/checkout\.stripe\.com\//)
      expect(first.body.plan_id).toBe("pro")
      const sessionId: string = first.body.session_id
      const opened = standIn.requests.find((r) => r.path === "/v1/checkout/sessions" && r.form.client_reference_id === owner.orgId)!
      expect(opened.form).toMatchObject({ mode: "subscription", line_items: { 0: { price: "price_pro", quantity: "1" } }, metadata: { org_id: owner.orgId } })
      expect(opened.idempotencyKey).toBeDefined()

      // A repeat for the same plan returns the same session; another plan is refused while it is open.
      const again = yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "pro" } })
      expect(again.body).toEqual(first.body)
      const other = yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "scale" } })
      expect(other.status).toBe(409)
      expect(other.body.error.code).toBe("checkout_in_progress")
      // Not paid yet: still the free plan.
      expect((yield* status(owner.token)).plan_id).toBe("starter")

      // The customer pays; Stripe calls back. The plan flips, unused free credits carried over.
      const paid = standIn.complete(sessionId, new Date())
      for (const event of paid.events) {
        const delivered = yield* deliver(event)
        expect(delivered.status, delivered.text).toBe(200)
      }
      const pro = yield* status(owner.token)
      expect(pro).toMatchObject({ plan_id: "pro", has_subscription: true, credits_limit: 1000 + 100, credits_used: 0, rate_limit_per_min: 2000 })
      // A redelivered event changes nothing.
      const redelivered = yield* deliver(paid.events[0]!)
      expect(redelivered.status).toBe(200)
      expect(redelivered.body.outcome).toBe("duplicate")
      expect(yield* status(owner.token)).toEqual(pro)

      expect((yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "scale" } })).body.error.code)
        .toBe("subscription_exists")
      const toFree = yield* call("POST", "/v1/billing/upgrade", { token: owner.token, json: { plan_id: "hobby" } })
      expect(toFree.status).toBe(409)
      expect(toFree.body.error.code).toBe("subscription_exists")

      const portal = yield* call("POST", "/v1/billing/portal", { token: owner.token })
      expect(portal.status, portal.text).toBe(200)
      expect(portal.body.portal_url).toMatch(/^https:\/\/billing\.stripe\.com\//)

      // Upgraded in the portal: at once, unused credits added.
      expect((yield* deliver(standIn.changePrice(paid.subscriptionId, "price_scale"))).status).toBe(200)
      const scale = yield* status(owner.token)
      expect(scale).toMatchObject({ plan_id: "scale", credits_limit: 5000 + 1100, scheduled_plan_id: null })
      // Downgraded in the portal: the larger plan until the period ends.
      expect((yield* deliver(standIn.changePrice(paid.subscriptionId, "price_pro"))).status).toBe(200)
      expect(yield* status(owner.token)).toMatchObject({ plan_id: "scale", scheduled_plan_id: "pro", credits_limit: 6100 })

      // Cancel: at the period's end, plan and credits kept until then.
      const canceled = yield* call("POST", "/v1/billing/cancel", { token: owner.token })
      expect(canceled.status, canceled.text).toBe(200)
      expect(canceled.body).toMatchObject({ cancel_at_period_end: true, credits_reset_at: scale.credits_reset_at })
      expect(typeof canceled.body.message).toBe("string")
      expect(standIn.subscription(paid.subscriptionId)!.cancel_at_period_end).toBe(true)
      expect(yield* status(owner.token)).toMatchObject({ plan_id: "scale", has_subscription: true, cancel_at_period_end: true, scheduled_plan_id: "starter" })
      expect((yield* call("POST", "/v1/billing/upgrade", { token: owner.token, json: { plan_id: "hobby" } })).body.error.code)
        .toBe("subscription_exists")

      // The processor ends the subscription: the default plan at once; free plans can be chosen again.
      expect((yield* deliver(standIn.end(paid.subscriptionId))).status).toBe(200)
      expect(yield* status(owner.token)).toMatchObject({ plan_id: "starter", has_subscription: false, cancel_at_period_end: false })
      expect((yield* call("POST", "/v1/billing/upgrade", { token: owner.token, json: { plan_id: "hobby" } })).status).toBe(200)
      // The portal still opens for the customer the organization had.
      expect((yield* call("POST", "/v1/billing/portal", { token: owner.token })).status).toBe(200)
    }))

  it.effect("an expired checkout frees the way for another plan; plans are isolated per organization", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const other = yield* signup()
      const first = yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "pro" } })
      expect((yield* call("POST", "/v1/billing/checkout", { token: other.token, json: { plan_id: "scale" } })).status).toBe(200)
      expect((yield* deliver(standIn.expire(first.body.session_id))).status).toBe(200)
      const scale = yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "scale" } })
      expect(scale.status, scale.text).toBe(200)
      expect(scale.body.session_id).not.toBe(first.body.session_id)
      // The other organization's payment changes only its own plan.
      const otherSession = (yield* call("POST", "/v1/billing/checkout", { token: other.token, json: { plan_id: "scale" } })).body.session_id
      for (const event of standIn.complete(otherSession, new Date()).events) expect((yield* deliver(event)).status).toBe(200)
      expect((yield* status(other.token)).plan_id).toBe("scale")
      expect((yield* status(owner.token)).plan_id).toBe("starter")
    }))

  it.effect("callbacks are verified on the raw body: a missing, forged or altered signature is 400", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const session = (yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "pro" } })).body.session_id
      const [created, completed] = standIn.complete(session, new Date()).events
      const noSignature = yield* call("POST", "/v1/billing/webhook", { raw: completed!.payload, headers: { "content-type": "application/json" } })
      expect(noSignature.status).toBe(400)
      expect(noSignature.body.error.code).toBe("bad_request")
      const forged = standIn.event("checkout.session.completed", JSON.parse(completed!.payload).data.object, { secret: "whsec_someone_else" })
      expect((yield* deliver(forged)).status).toBe(400)
      const altered = yield* deliver({ ...completed!, payload: completed!.payload.replace(owner.orgId, "org_someone_else") })
      expect(altered.status).toBe(400)
      expect((yield* status(owner.token)).plan_id).toBe("starter")
      // The genuine ones flip it; an event type billing does not use is acknowledged.
      for (const event of [created!, completed!]) expect((yield* deliver(event)).status).toBe(200)
      expect((yield* status(owner.token)).plan_id).toBe("pro")
      const unrelated = yield* deliver(standIn.event("invoice.created", { id: "in_1", object: "invoice" }))
      expect(unrelated.status).toBe(200)
      expect(unrelated.body.outcome).toBe("ignored")
    }))

  it.effect("the processor failing is a 503, never a changed plan", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      standIn.failing = true
      const reply = yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "pro" } }).pipe(
        Effect.ensuring(Effect.sync(() => (standIn.failing = false)))
      )
      expect(reply.status, reply.text).toBe(503)
      expect(reply.body.error.code).toBe("service_unavailable")
      expect((yield* status(owner.token)).plan_id).toBe("starter")
      // The next try opens a session.
      expect((yield* call("POST", "/v1/billing/checkout", { token: owner.token, json: { plan_id: "pro" } })).status).toBe(200)
    }))
}, { plansConfig: Option.some(plansPath), stripe })

eachProfile("billing without a payment processor", (it) => {
  it.effect("checkout, portal, cancel and the callback answer 503 billing_not_configured; status and free plans work", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      for (const [path, json] of [["/v1/billing/checkout", { plan_id: "pro" }], ["/v1/billing/portal", undefined], ["/v1/billing/cancel", undefined]] as const) {
        const reply = yield* callRaw("POST", path, { token: owner.token, ...(json === undefined ? {} : { json }) })
        expect(reply.status, path).toBe(503)
        expect(reply.body.error.code).toBe("billing_not_configured")
      }
      const callback = yield* call("POST", "/v1/billing/webhook", { raw: "{}", headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=x" } })
      expect(callback.status).toBe(503)
      expect(callback.body.error.code).toBe("billing_not_configured")
      expect((yield* call("GET", "/v1/billing", { token: owner.token })).status).toBe(200)
      expect((yield* call("POST", "/v1/billing/upgrade", { token: owner.token, json: { plan_id: "hobby" } })).body.plan_id).toBe("hobby")
    }))
}, { plansConfig: Option.some(plansPath) })
