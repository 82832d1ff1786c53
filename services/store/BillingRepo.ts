/**
 * An organization's side of the payment processor: its subscription state in
 * `org_billing` (the plan and period columns the ledger keeps are changed
 * here only by a billing transition), the checkout sessions it opened, and
 * the processor events already applied.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { BillingUpdate } from "../../src/metering/BillingStates.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { BILLING_COLUMNS, decodeBilling } from "./LedgerRepo.ts"
import { storeFailure } from "./SqlFailure.ts"

const CheckoutRow = Schema.Struct({
  session_id: Schema.String,
  org_id: Schema.String,
  plan_id: Schema.String,
  url: Schema.String,
  status: Schema.Literal("open", "complete", "expired"),
  created_at: Timestamptz,
  expires_at: Timestamptz
})
export type CheckoutRow = typeof CheckoutRow.Type

const decodeCheckouts = decodeRows(CheckoutRow)
const decodeOrg = decodeRows(Schema.Struct({ org_id: Schema.String }))
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodeEvent = decodeRows(Schema.Struct({ event_id: Schema.String }))

export class BillingRepo extends Effect.Service<BillingRepo>()("engram/store/BillingRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    return {
      /** Runs `effect` in one transaction (a transition, its event, its checkout). */
      transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(sql.withTransaction, storeFailure),

      /** The billing row, locked until the transaction ends. */
      lock: (orgId: string) =>
        sql`SELECT ${sql.literal(BILLING_COLUMNS)} FROM org_billing WHERE org_id = ${orgId} FOR UPDATE`.pipe(
          Effect.flatMap(decodeBilling),
          Effect.map((rows) => Option.fromNullable(rows[0]))
        ),

      save: (orgId: string, update: BillingUpdate, now: Date) =>
        sql`UPDATE org_billing SET plan_id = ${update.plan_id}, period_anchor = ${update.period_anchor},
            period_start = ${update.period_start}, credits_reset_at = ${update.credits_reset_at},
            credits_used = ${update.credits_used}, bonus_credits = ${update.bonus_credits},
            customer_id = ${update.customer_id}, subscription_id = ${update.subscription_id},
            cancel_at_period_end = ${update.cancel_at_period_end}, pending_plan_id = ${update.pending_plan_id},
            processor_period_start = ${update.processor_period_start}, updated_at = ${now}
          WHERE org_id = ${orgId}`,

      /** A free plan chosen by the organization: at once, in the same period. */
      setPlan: (orgId: string, planId: string, now: Date) =>
        sql`UPDATE org_billing SET plan_id = ${planId}, pending_plan_id = NULL, updated_at = ${now} WHERE org_id = ${orgId}`.pipe(
          storeFailure
        ),

      markCanceling: (orgId: string, now: Date) =>
        sql`UPDATE org_billing SET cancel_at_period_end = true, updated_at = ${now} WHERE org_id = ${orgId}`.pipe(storeFailure),

      orgOfSubscription: (subscriptionId: string) =>
        sql`SELECT org_id FROM org_billing WHERE subscription_id = ${subscriptionId}`.pipe(
          Effect.flatMap(decodeOrg),
          Effect.map((rows) => Option.fromNullable(rows[0]?.org_id))
        ),

      orgOfCustomer: (customerId: string) =>
        sql`SELECT org_id FROM org_billing WHERE customer_id = ${customerId} LIMIT 1`.pipe(
          Effect.flatMap(decodeOrg),
          Effect.map((rows) => Option.fromNullable(rows[0]?.org_id))
        ),

      /** True the first time an event id is seen; a redelivery gets false. */
      claimEvent: (eventId: string, eventType: string, orgId: string | null, now: Date) =>
        sql`INSERT INTO billing_events (event_id, event_type, org_id, received_at)
          VALUES (${eventId}, ${eventType}, ${orgId}, ${now})
          ON CONFLICT (event_id) DO NOTHING RETURNING event_id`.pipe(
          Effect.flatMap(decodeEvent),
          Effect.map((rows) => rows.length > 0)
        ),

      /** The organization's open checkout, if one has not expired. */
      openCheckout: (orgId: string, now: Date) =>
        sql`SELECT session_id, org_id, plan_id, url, status, created_at, expires_at FROM billing_checkouts
          WHERE org_id = ${orgId} AND status = 'open' AND expires_at > ${now}
          ORDER BY created_at DESC LIMIT 1`.pipe(
          Effect.flatMap(decodeCheckouts),
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        ),

      checkoutCount: (orgId: string) =>
        sql`SELECT count(*) AS n FROM billing_checkouts WHERE org_id = ${orgId}`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => rows[0]?.n ?? 0),
          storeFailure
        ),

      insertCheckout: (row: CheckoutRow) =>
        sql`INSERT INTO billing_checkouts (session_id, org_id, plan_id, url, status, created_at, expires_at)
          VALUES (${row.session_id}, ${row.org_id}, ${row.plan_id}, ${row.url}, ${row.status}, ${row.created_at}, ${row.expires_at})
          ON CONFLICT (session_id) DO NOTHING`.pipe(storeFailure),

      setCheckoutStatus: (sessionId: string, status: "complete" | "expired") =>
        sql`UPDATE billing_checkouts SET status = ${status} WHERE session_id = ${sessionId}`
    }
  })
}) {}
