/**
 * What operators watch that lives in the store: the write queue, how long its
 * oldest item has waited, facts waiting for consolidation and webhook
 * deliveries not yet done. Read at each scrape of `/metrics`; every partial
 * index these counts read exists for the loops that do the work.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRow, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const GaugeRow = Schema.Struct({
  queued: Int8,
  oldest_queued: Schema.NullOr(Timestamptz),
  pending_facts: Int8,
  deliveries_pending: Int8
})

const decodeGauges = decodeRow(GaugeRow)

export interface StoreGauges {
  /** Items of queued writes not yet stored (`ingest_items` in state queued). */
  readonly queued: number
  /** When the oldest of them was queued; null when none waits. */
  readonly oldestQueued: Date | null
  /** Active facts not yet folded into a note. */
  readonly pendingFacts: number
  /** Webhook deliveries pending or being attempted. */
  readonly deliveriesPending: number
}

export class OperationsRepo extends Effect.Service<OperationsRepo>()("engram/store/OperationsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      gauges: sql`SELECT
          (SELECT count(*) FROM ingest_items WHERE status = 'queued') AS queued,
          (SELECT min(j.created_at) FROM ingest_jobs j
            WHERE EXISTS (SELECT 1 FROM ingest_items i WHERE i.job_id = j.job_id AND i.status = 'queued')) AS oldest_queued,
          (SELECT count(*) FROM memories WHERE type = 'fact' AND consolidated_at IS NULL AND state = 'active') AS pending_facts,
          (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'processing')) AS deliveries_pending`.pipe(
        Effect.flatMap(decodeGauges),
        Effect.map((row): StoreGauges => ({
          queued: Number(row.queued),
          oldestQueued: row.oldest_queued,
          pendingFacts: Number(row.pending_facts),
          deliveriesPending: Number(row.deliveries_pending)
        })),
        storeFailure
      )
    }
  })
}) {}
