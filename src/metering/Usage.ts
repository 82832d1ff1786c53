/** Organization usage from the ledger: a time series and a breakdown per operation and space. */
import { Clock, Effect } from "effect"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { ValidationError } from "../domain/Errors.ts"
import type { UsageWindow } from "../domain/Usage.ts"
import { monthStart } from "./Periods.ts"

const DAY = 86_400_000
/** The longest window a request may ask for, per granularity (it bounds the points of a series). */
const MAX_WINDOW = { hour: 31 * DAY, day: 400 * DAY } as const

export class UsageReports extends Effect.Service<UsageReports>()("engram/metering/UsageReports", {
  dependencies: [LedgerRepo.Default],
  effect: Effect.gen(function*() {
    const ledger = yield* LedgerRepo

    const windowOf = (query: UsageWindow) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const from = query.from === undefined ? monthStart(now) : new Date(query.from)
        const to = query.to === undefined ? now : new Date(query.to)
        if (from.getTime() >= to.getTime()) return yield* new ValidationError({ message: "from must be before to" })
        if (to.getTime() - from.getTime() > MAX_WINDOW[query.granularity]) {
          return yield* new ValidationError({
            message: `a window of ${query.granularity} points is at most ${MAX_WINDOW[query.granularity] / DAY} days`
          })
        }
        return { from, to }
      })

    return {
      series: (orgId: string, query: UsageWindow) =>
        Effect.gen(function*() {
          const { from, to } = yield* windowOf(query)
          const rows = yield* ledger.series(orgId, from, to, query.granularity)
          const points = new Map<number, { start: string; credits: number; operations: Record<string, number> }>()
          for (const row of rows) {
            const key = row.bucket.getTime()
            let point = points.get(key)
            if (!point) points.set(key, (point = { start: row.bucket.toISOString(), credits: 0, operations: {} }))
            point.credits += row.credits
            point.operations[row.op_type] = (point.operations[row.op_type] ?? 0) + row.quantity
          }
          const series = [...points.values()]
          return {
            org_id: orgId,
            from: from.toISOString(),
            to: to.toISOString(),
            granularity: query.granularity,
            credits_used: series.reduce((n, p) => n + p.credits, 0),
            series
          }
        }),

      breakdown: (orgId: string, query: UsageWindow) =>
        Effect.gen(function*() {
          const { from, to } = yield* windowOf(query)
          const [totals, perSpace] = yield* Effect.all([ledger.totals(orgId, from, to), ledger.bySpace(orgId, from, to)], {
            concurrency: 1
          })
          const spaces = new Map<string | null, { space_id: string | null; credits: number; operations: Record<string, number> }>()
          for (const row of perSpace) {
            let space = spaces.get(row.space_id)
            if (!space) spaces.set(row.space_id, (space = { space_id: row.space_id, credits: 0, operations: {} }))
            space.credits += row.credits
            space.operations[row.op_type] = row.quantity
          }
          return {
            org_id: orgId,
            from: from.toISOString(),
            to: to.toISOString(),
            credits_used: totals.reduce((n, t) => n + t.credits, 0),
            operations: totals.map((t) => ({ op_type: t.op_type, count: t.quantity, credits: t.credits })),
            spaces: [...spaces.values()]
          }
        })
    }
  })
}) {}
