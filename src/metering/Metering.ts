/**
 * Metering: the organization's requests per minute (a sliding window in the
 * shared Cache, so every node counts the same requests), its credits (the
 * ledger in the store), and what every response reports about both.
 *
 * - `admit` runs on every authenticated request: it counts the request
 *   against the plan's rate limit and fills in the response's headers.
 * - `charge` pays for an operation before it runs: one ledger entry and the
 *   counter in one transaction, refused if the period's credits would go
 *   below zero, so concurrent callers never overdraw. Keyed by the request
 *   id: a retried request is charged once.
 * - `chargeTokens` pays for a model call's tokens after it ran (the amount is
 *   known only then): never refused, so it may take the balance below zero
 *   by the tokens of the calls admitted while credits remained.
 * - Stored memories are debited by the space's writer, in the transaction
 *   that stores them; `requireCredits` only admits a write while credits
 *   remain for what it asks to store.
 */
import { Clock, Duration, Effect, FiberRef } from "effect"
import { Cache, cacheDown } from "../../services/cache/Cache.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { RateLimited } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { ModelUsage } from "../../services/llm/Provider.ts"
import { CurrentRequestId } from "../domain/RequestContext.ts"
import { type PlanEntry, Plans } from "./Plans.ts"
import { type FixedOp, RATES, tokenCredits } from "./Rates.ts"

export const RATE_WINDOW = Duration.minutes(1)

/** What the response of the request being served reports; filled in as the request is metered. */
export interface MeterReport {
  orgId: string | null
  limit: number
  remaining: number
  creditsRemaining: number
  /** Set on a 429: seconds until a retry can succeed. */
  retryAfterSeconds: number | null
  /** The organization's plan and period as `admit` read them: the request's charges reuse them. */
  account: Account | null
}

export interface Account {
  readonly plan: PlanEntry
  readonly limit: number
  readonly creditsResetAt: Date
}

export const newReport = (): MeterReport => ({
  orgId: null,
  limit: 0,
  remaining: 0,
  creditsRemaining: 0,
  retryAfterSeconds: null,
  account: null
})

/** The report of the request being served (the envelope middleware gives each request its own). */
export const CurrentMeterReport = FiberRef.unsafeMake<MeterReport>(newReport())

export const reportHeaders = (report: MeterReport): Record<string, string> => ({
  "x-ratelimit-limit": String(report.limit),
  "x-ratelimit-remaining": String(report.remaining),
  "x-ratelimit-window": String(Duration.toSeconds(RATE_WINDOW)),
  "x-credits-remaining": String(report.creditsRemaining)
})

export class Metering extends Effect.Service<Metering>()("engram/metering/Metering", {
  dependencies: [LedgerRepo.Default, Plans.Default],
  effect: Effect.gen(function*() {
    const ledger = yield* LedgerRepo
    const plans = yield* Plans
    const cache = yield* Cache

    const nowDate = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** The organization's plan and period as of now. */
    const account = (orgId: string) =>
      Effect.gen(function*() {
        const now = yield* nowDate
        const row = yield* ledger.current(orgId, now, plans.defaultPlan.plan_id)
        const plan = plans.of(row.plan_id)
        const limit = plan.credits + row.bonus_credits
        return { row, plan, now, limit, remaining: Math.max(0, limit - row.credits_used) }
      })

    const secondsUntil = (when: Date, now: Date) => Math.max(1, Math.ceil((when.getTime() - now.getTime()) / 1000))

    const exhausted = (resetAt: Date, now: Date) =>
      Effect.gen(function*() {
        const report = yield* FiberRef.get(CurrentMeterReport)
        report.retryAfterSeconds = secondsUntil(resetAt, now)
        report.creditsRemaining = 0
        return yield* new RateLimited({
          message: `this organization's credits are spent until ${resetAt.toISOString()}; ` +
            "free operations keep working, and a paid plan adds credits"
        })
      })

    /**
     * The plan and period of the request's organization, as `admit` read
     * them, with the balance the report holds (updated by each charge); read
     * from the store for a call `admit` did not see.
     */
    const known = (orgId: string) =>
      Effect.flatMap(FiberRef.get(CurrentMeterReport), (report) =>
        report.orgId === orgId && report.account !== null
          ? Effect.succeed({ ...report.account, remaining: report.creditsRemaining })
          : Effect.map(account(orgId), (read) => ({
            plan: read.plan,
            limit: read.limit,
            creditsResetAt: read.row.credits_reset_at,
            remaining: read.remaining
          })))

    /** Counts one request of the principal's organization; fills in the response's headers. */
    const admit = (principal: Pick<PrincipalShape, "orgId">) =>
      Effect.gen(function*() {
        const { limit, plan, remaining, row } = yield* account(principal.orgId)
        const decision = yield* cache.slidingWindow(`rl:org:${principal.orgId}`, plan.rate_limit_per_min, RATE_WINDOW).pipe(
          Effect.mapError(cacheDown)
        )
        const report = yield* FiberRef.get(CurrentMeterReport)
        report.orgId = principal.orgId
        report.limit = plan.rate_limit_per_min
        report.remaining = decision.remaining
        report.creditsRemaining = remaining
        report.account = { plan, limit, creditsResetAt: row.credits_reset_at }
        if (!decision.allowed) {
          report.retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
          return yield* new RateLimited({
            message: `this organization is over its ${plan.rate_limit_per_min} requests per minute; retry after ` +
              `${report.retryAfterSeconds} s, with exponential backoff`
          })
        }
      }).pipe(Effect.withSpan("Metering.admit"))

    /** Pays for `quantity` of a fixed-price operation before it runs; 429 when the credits do not cover it. */
    const charge = (orgId: string, op: FixedOp, options: { readonly quantity?: number; readonly spaceId?: string | null } = {}) =>
      Effect.gen(function*() {
        const quantity = options.quantity ?? 1
        const { creditsResetAt, limit } = yield* known(orgId)
        const now = yield* nowDate
        const requestId = yield* FiberRef.get(CurrentRequestId)
        const debit = yield* ledger.debit({
          orgId,
          opType: op,
          spaceId: options.spaceId ?? null,
          quantity,
          credits: quantity * RATES[op],
          requestId: requestId === "" ? null : requestId,
          at: now
        }, limit)
        const report = yield* FiberRef.get(CurrentMeterReport)
        switch (debit._tag) {
          case "Insufficient":
            return yield* exhausted(creditsResetAt, now)
          case "Charged":
            if (report.orgId === orgId) report.creditsRemaining = Math.max(0, limit - debit.used)
            return
          case "Duplicate":
            return
        }
      }).pipe(Effect.withSpan("Metering.charge", { attributes: { op } }))

    /** Pays for a model call's tokens, after it ran. */
    const chargeTokens = (
      orgId: string,
      spaceId: string | null,
      usage: ModelUsage,
      rates: { readonly inputRate: number; readonly outputRate: number }
    ) =>
      Effect.gen(function*() {
        const credits = tokenCredits(usage, rates)
        if (credits === 0) return
        const { limit } = yield* known(orgId)
        const now = yield* nowDate
        const requestId = yield* FiberRef.get(CurrentRequestId)
        const debit = yield* ledger.debit({
          orgId,
          opType: "model_tokens",
          spaceId,
          quantity: usage.input_tokens + usage.output_tokens,
          credits,
          requestId: requestId === "" ? null : requestId,
          at: now
        }, null)
        const report = yield* FiberRef.get(CurrentMeterReport)
        if (debit._tag === "Charged" && report.orgId === orgId) report.creditsRemaining = Math.max(0, limit - debit.used)
      }).pipe(Effect.withSpan("Metering.chargeTokens"))

    /** Admits a write of `memories` memories while the credits cover them (debited when stored). */
    const requireCredits = (orgId: string, credits: number) =>
      Effect.gen(function*() {
        const { creditsResetAt, remaining } = yield* known(orgId)
        if (remaining < Math.max(1, credits)) return yield* exhausted(creditsResetAt, yield* nowDate)
      })

    /** Reads the balance again for the response's X-Credits-Remaining (after a write stored and debited memories). */
    const reportBalance = (orgId: string) =>
      Effect.gen(function*() {
        const report = yield* FiberRef.get(CurrentMeterReport)
        if (report.orgId !== orgId) return
        report.creditsRemaining = (yield* account(orgId)).remaining
      })

    /** The key-usage figures of GET /v1/usage/me. */
    const usage = (orgId: string) =>
      Effect.map(account(orgId), ({ limit, plan, remaining, row }) => ({
        credits_remaining: remaining,
        credits_limit: limit,
        credits_used: row.credits_used,
        rate_limit_per_min: plan.rate_limit_per_min
      }))

    /** The organization's plan (as this request's `admit` read it). */
    const plan = (orgId: string) => Effect.map(known(orgId), (read) => read.plan)

    return { admit, charge, chargeTokens, requireCredits, reportBalance, usage, account, plan }
  })
}) {}
