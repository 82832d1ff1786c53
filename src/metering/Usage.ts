/** Organization usage from the ledger: a time series and a breakdown per operation and space. */
import { Clock, Effect } from "effect"
import { InjectionRepo } from "../../services/store/InjectionRepo.ts"
import { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { ValidationError } from "../domain/Errors.ts"
import type { UsageWindow } from "../domain/Usage.ts"
import { monthStart } from "./Periods.ts"

const DAY = 86_400_000
/** The longest window a request may ask for, per granularity (it bounds the points of a series). */
const MAX_WINDOW = { hour: 31 * DAY, day: 400 * DAY } as const

interface Injected {
  readonly injections: number
  readonly block_tokens: number
  readonly cache_prefix_tokens: number
}

const noInjection = () => ({ injections: 0, injected_tokens: 0, cache_prefix_tokens: 0 })

const figures = (row: Injected) => ({
  injections: row.injections,
  injected_tokens: row.block_tokens,
  cache_prefix_tokens: row.cache_prefix_tokens
})

const sum = (all: ReadonlyArray<ReturnType<typeof figures>>) =>
  all.reduce((total, f) => ({
    injections: total.injections + f.injections,
    injected_tokens: total.injected_tokens + f.injected_tokens,
    cache_prefix_tokens: total.cache_prefix_tokens + f.cache_prefix_tokens
  }), noInjection())

export class UsageReports extends Effect.Service<UsageReports>()("engram/metering/UsageReports", {
  dependencies: [LedgerRepo.Default, InjectionRepo.Default],
  effect: Effect.gen(function*() {
    const ledger = yield* LedgerRepo
    const injectionRepo = yield* InjectionRepo

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
          const injected = yield* injectionRepo.series(orgId, from, to, query.granularity)
          const points = new Map<number, {
            start: string
            credits: number
            operations: Record<string, number>
            memory_injection: { injections: number; injected_tokens: number; cache_prefix_tokens: number }
          }>()
          const pointAt = (bucket: Date) => {
            let point = points.get(bucket.getTime())
            if (!point) {
              point = { start: bucket.toISOString(), credits: 0, operations: {}, memory_injection: noInjection() }
              points.set(bucket.getTime(), point)
            }
            return point
          }
          for (const row of rows) {
            const point = pointAt(row.bucket)
            point.credits += row.credits
            point.operations[row.op_type] = (point.operations[row.op_type] ?? 0) + row.quantity
          }
          for (const row of injected) pointAt(row.bucket).memory_injection = figures(row)
          const series = [...points.values()].sort((a, b) => a.start < b.start ? -1 : 1)
          return {
            org_id: orgId,
            from: from.toISOString(),
            to: to.toISOString(),
            granularity: query.granularity,
            credits_used: series.reduce((n, p) => n + p.credits, 0),
            memory_injection: sum(injected.map(figures)),
            series
          }
        }),

      breakdown: (orgId: string, query: UsageWindow) =>
        Effect.gen(function*() {
          const { from, to } = yield* windowOf(query)
          const [totals, perSpace] = yield* Effect.all([ledger.totals(orgId, from, to), ledger.bySpace(orgId, from, to)], {
            concurrency: 1
          })
          const injected = yield* injectionRepo.bySpace(orgId, from, to)
          const spaces = new Map<string | null, {
            space_id: string | null
            credits: number
            operations: Record<string, number>
            injected_tokens: number
            cache_prefix_tokens: number
          }>()
          const spaceOf = (spaceId: string | null) => {
            let space = spaces.get(spaceId)
            if (!space) {
              space = { space_id: spaceId, credits: 0, operations: {}, injected_tokens: 0, cache_prefix_tokens: 0 }
              spaces.set(spaceId, space)
            }
            return space
          }
          for (const row of perSpace) {
            const space = spaceOf(row.space_id)
            space.credits += row.credits
            space.operations[row.op_type] = row.quantity
          }
          for (const row of injected) {
            const space = spaceOf(row.space_id)
            space.injected_tokens = row.block_tokens
            space.cache_prefix_tokens = row.cache_prefix_tokens
          }
          return {
            org_id: orgId,
            from: from.toISOString(),
            to: to.toISOString(),
            credits_used: totals.reduce((n, t) => n + t.credits, 0),
            operations: totals.map((t) => ({ op_type: t.op_type, count: t.quantity, credits: t.credits })),
            memory_injection: sum(injected.map(figures)),
            spaces: [...spaces.values()]
          }
        })
    }
  })
}) {}
