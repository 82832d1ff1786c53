/**
 * The credit ledger and each organization's current period. The counter in
 * `org_billing` moves with every entry, in the entry's transaction; when a
 * period starts it is read back from the ledger, so it never drifts for long.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { rollover } from "../../src/metering/BillingStates.ts"
import { periodAt } from "../../src/metering/Periods.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const BillingRow = Schema.Struct({
  org_id: Schema.String,
  plan_id: Schema.String,
  period_anchor: Timestamptz,
  period_start: Timestamptz,
  credits_reset_at: Timestamptz,
  credits_used: Int8,
  bonus_credits: Int8,
  customer_id: Schema.NullOr(Schema.String),
  subscription_id: Schema.NullOr(Schema.String),
  cancel_at_period_end: Schema.Boolean,
  pending_plan_id: Schema.NullOr(Schema.String),
  processor_period_start: Schema.NullOr(Timestamptz)
})
export type BillingRow = typeof BillingRow.Type

export interface LedgerEntry {
  readonly orgId: string
  readonly opType: string
  readonly spaceId: string | null
  readonly quantity: number
  readonly credits: number
  /** The request it pays for: a second entry for the same request and operation is not made. */
  readonly requestId: string | null
  readonly at: Date
}

export type Debit =
  | { readonly _tag: "Charged"; readonly used: number }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "Insufficient" }

const OpTotal = Schema.Struct({ op_type: Schema.String, entries: Int8, quantity: Int8, credits: Int8 })
const SpaceTotal = Schema.Struct({ space_id: Schema.NullOr(Schema.String), op_type: Schema.String, quantity: Int8, credits: Int8 })
const Bucket = Schema.Struct({ bucket: Timestamptz, op_type: Schema.String, quantity: Int8, credits: Int8 })

/** Every column of `org_billing` that BillingRow reads. */
export const BILLING_COLUMNS = "org_id, plan_id, period_anchor, period_start, credits_reset_at, credits_used, bonus_credits, " +
  "customer_id, subscription_id, cancel_at_period_end, pending_plan_id, processor_period_start"

export const decodeBilling = decodeRows(BillingRow)
const decodeCreated = decodeRows(Schema.Struct({ created_at: Timestamptz }))
const decodeSum = decodeRows(Schema.Struct({ used: Int8 }))
const decodeIds = decodeRows(Schema.Struct({ entry_id: Int8 }))
const decodeDebit = decodeRows(Schema.Struct({
  outcome: Schema.Literal("charged", "duplicate", "insufficient"),
  credits_used: Schema.NullOr(Int8)
}))

export class LedgerRepo extends Effect.Service<LedgerRepo>()("engram/store/LedgerRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const usedSince = (orgId: string, start: Date) =>
      sql`SELECT coalesce(sum(credits), 0) AS used FROM credit_ledger WHERE org_id = ${orgId} AND created_at >= ${start}`.pipe(
        Effect.flatMap(decodeSum),
        Effect.map((rows) => rows[0]?.used ?? 0)
      )

    /** The organization's signup: the free plan's periods run from its anniversary. */
    const signedUp = (orgId: string, now: Date) =>
      sql`SELECT created_at FROM organizations WHERE id = ${orgId}`.pipe(
        Effect.flatMap(decodeCreated),
        Effect.map((rows) => rows[0]?.created_at ?? now)
      )

    const select = (orgId: string) =>
      sql`SELECT ${sql.literal(BILLING_COLUMNS)} FROM org_billing WHERE org_id = ${orgId}`.pipe(Effect.flatMap(decodeBilling), Effect.map((rows) => Option.fromNullable(rows[0])))

    /** The organization's billing row for the period holding `now`: made on first use, moved on when a period ends. */
    const current = (orgId: string, now: Date, defaultPlan: string) =>
      Effect.gen(function*() {
        const found = yield* select(orgId)
        if (Option.isNone(found)) {
          const anchor = yield* signedUp(orgId, now)
          const period = periodAt(anchor, now)
          const used = yield* usedSince(orgId, period.start)
          yield* sql`INSERT INTO org_billing (org_id, plan_id, period_anchor, period_start, credits_reset_at, credits_used, updated_at)
            VALUES (${orgId}, ${defaultPlan}, ${anchor}, ${period.start}, ${period.end}, ${used}, ${now})
            ON CONFLICT (org_id) DO NOTHING`
          return Option.getOrThrow(yield* select(orgId))
        }
        const row = found.value
        if (row.credits_reset_at.getTime() > now.getTime()) return row
        const next = rollover(row, defaultPlan, yield* signedUp(orgId, now))
        const period = periodAt(next.periodAnchor, now)
        const used = yield* usedSince(orgId, period.start)
        yield* sql`UPDATE org_billing SET plan_id = ${next.planId}, period_anchor = ${next.periodAnchor},
            period_start = ${period.start}, credits_reset_at = ${period.end}, credits_used = ${used}, bonus_credits = 0,
            subscription_id = ${next.subscriptionId}, cancel_at_period_end = false, pending_plan_id = NULL, updated_at = ${now}
          WHERE org_id = ${orgId} AND credits_reset_at = ${row.credits_reset_at}`
        return Option.getOrThrow(yield* select(orgId))
      })

    const insertEntry = (entry: LedgerEntry) =>
      entry.requestId === null
        ? sql`INSERT INTO credit_ledger (org_id, op_type, space_id, quantity, credits, request_id, created_at)
            VALUES (${entry.orgId}, ${entry.opType}, ${entry.spaceId}, ${entry.quantity}, ${entry.credits}, NULL, ${entry.at})
            RETURNING entry_id`.pipe(Effect.flatMap(decodeIds))
        : sql`INSERT INTO credit_ledger (org_id, op_type, space_id, quantity, credits, request_id, created_at)
            VALUES (${entry.orgId}, ${entry.opType}, ${entry.spaceId}, ${entry.quantity}, ${entry.credits}, ${entry.requestId}, ${entry.at})
            ON CONFLICT (org_id, op_type, request_id) WHERE request_id IS NOT NULL DO NOTHING
            RETURNING entry_id`.pipe(Effect.flatMap(decodeIds))

    return {
      signedUp: (orgId: string, now: Date) => storeFailure(signedUp(orgId, now)),

      /** One read on every request; a transaction only when the row is made or its period moves on. */
      current: (orgId: string, now: Date, defaultPlan: string) =>
        select(orgId).pipe(
          Effect.flatMap((found) =>
            Option.isSome(found) && found.value.credits_reset_at.getTime() > now.getTime()
              ? Effect.succeed(found.value)
              : sql.withTransaction(current(orgId, now, defaultPlan))
          ),
          storeFailure
        ),

      /**
       * One entry and the counter, in one statement (`engram_debit`, migration 0011). With a `limit`, only if the
       * period's credits stay within it (plus its bonus): the statement
       * takes the row's lock, so concurrent debits never overdraw it.
       */
      debit: (entry: LedgerEntry, limit: number | null) =>
        sql`SELECT outcome, credits_used FROM engram_debit(${entry.orgId}, ${entry.opType}, ${entry.spaceId}, ${entry.quantity},
            ${entry.credits}, ${entry.requestId}, ${entry.at}, ${limit})`.pipe(
          Effect.flatMap(decodeDebit),
          Effect.map((rows): Debit => {
            const row = rows[0]
            if (row === undefined || row.outcome === "duplicate") return { _tag: "Duplicate" }
            if (row.outcome === "insufficient" || row.credits_used === null) return { _tag: "Insufficient" }
            return { _tag: "Charged", used: row.credits_used }
          }),
          storeFailure
        ),

      /** Entries made inside the caller's transaction (what they pay for commits with them), never refused. */
      recordInTransaction: (entry: LedgerEntry) =>
        Effect.zipRight(
          insertEntry(entry),
          sql`UPDATE org_billing SET credits_used = credits_used + ${entry.credits} WHERE org_id = ${entry.orgId}`
        ),

      /** Per operation, over [from, to). */
      totals: (orgId: string, from: Date, to: Date) =>
        sql`SELECT op_type, count(*) AS entries, coalesce(sum(quantity), 0) AS quantity, coalesce(sum(credits), 0) AS credits
          FROM credit_ledger WHERE org_id = ${orgId} AND created_at >= ${from} AND created_at < ${to}
          GROUP BY op_type ORDER BY op_type`.pipe(Effect.flatMap(decodeRows(OpTotal)), storeFailure),

      /** Per space and operation, over [from, to). */
      bySpace: (orgId: string, from: Date, to: Date) =>
        sql`SELECT space_id, op_type, coalesce(sum(quantity), 0) AS quantity, coalesce(sum(credits), 0) AS credits
          FROM credit_ledger WHERE org_id = ${orgId} AND created_at >= ${from} AND created_at < ${to}
          GROUP BY space_id, op_type ORDER BY space_id, op_type`.pipe(Effect.flatMap(decodeRows(SpaceTotal)), storeFailure),

      /** Per hour or day and operation, over [from, to). */
      series: (orgId: string, from: Date, to: Date, bucket: "hour" | "day") =>
        sql`SELECT date_trunc(${bucket}, created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS bucket, op_type,
            coalesce(sum(quantity), 0) AS quantity, coalesce(sum(credits), 0) AS credits
          FROM credit_ledger WHERE org_id = ${orgId} AND created_at >= ${from} AND created_at < ${to}
          GROUP BY 1, op_type ORDER BY 1, op_type`.pipe(Effect.flatMap(decodeRows(Bucket)), storeFailure)
    }
  })
}) {}
