/**
 * Queued writes. A job's items are stored in the same transaction that
 * acknowledges them; an item is marked done in the transaction that stores its
 * memories, so after a crash every acknowledged item is stored exactly once.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { Job } from "../../src/domain/Memories.ts"
import { iso, storeFailure } from "./SqlFailure.ts"

export interface QueuedItem {
  readonly job_id: string
  readonly position: number
  readonly request: unknown
}

/** How one queued item ended: stored (with the ids of its memories) or failed. */
export type ItemOutcome =
  | { readonly _tag: "Completed"; readonly item: QueuedItem; readonly memoryIds: ReadonlyArray<string> }
  | { readonly _tag: "Failed"; readonly item: QueuedItem; readonly error: string }

const outcomeRecord = (outcome: ItemOutcome) => ({
  job_id: outcome.item.job_id,
  position: outcome.item.position,
  status: outcome._tag === "Completed" ? "completed" : "failed",
  memory_ids: outcome._tag === "Completed" ? outcome.memoryIds : [],
  error: outcome._tag === "Failed" ? outcome.error : null
})

interface JobRow {
  readonly job_id: string
  readonly space_id: string
  readonly created_at: Date
  readonly updated_at: Date
  readonly total: string
  readonly queued: string
  readonly completed: string
  readonly failed: string
  readonly cancelled: string
  readonly memory_ids: ReadonlyArray<string> | null
  readonly error: string | null
}

/** The job's state follows from its items. */
export const jobStatus = (counts: { queued: number; completed: number; failed: number; cancelled: number }): Job["status"] => {
  if (counts.queued > 0) return counts.completed + counts.failed + counts.cancelled > 0 ? "processing" : "queued"
  if (counts.completed > 0) return "completed"
  if (counts.failed > 0) return "failed"
  return "cancelled"
}

const toJob = (row: JobRow): Job => {
  const items = {
    total: Number(row.total),
    queued: Number(row.queued),
    completed: Number(row.completed),
    failed: Number(row.failed),
    cancelled: Number(row.cancelled)
  }
  return {
    job_id: row.job_id,
    space_id: row.space_id,
    status: jobStatus(items),
    items,
    memory_ids: [...(row.memory_ids ?? [])],
    error: row.error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at)
  }
}

export class JobRepo extends Effect.Service<JobRepo>()("engram/store/JobRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const get = (orgId: string, spaceId: string, jobId: string) =>
      sql<JobRow>`SELECT j.job_id, j.space_id, j.created_at, j.updated_at,
          count(i.position) AS total,
          count(i.position) FILTER (WHERE i.status = 'queued') AS queued,
          count(i.position) FILTER (WHERE i.status = 'completed') AS completed,
          count(i.position) FILTER (WHERE i.status = 'failed') AS failed,
          count(i.position) FILTER (WHERE i.status = 'cancelled') AS cancelled,
          array_agg(m.id ORDER BY i.position, m.ord) FILTER (WHERE m.id IS NOT NULL) AS memory_ids,
          min(i.error) AS error
        FROM ingest_jobs j
        JOIN ingest_items i ON i.job_id = j.job_id
        LEFT JOIN LATERAL unnest(i.memory_ids) WITH ORDINALITY AS m(id, ord) ON true
        WHERE j.job_id = ${jobId} AND j.org_id = ${orgId} AND j.space_id = ${spaceId}
        GROUP BY j.job_id`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toJob))), storeFailure)

    return {
      get,

      create: (orgId: string, spaceId: string, jobId: string, requests: ReadonlyArray<unknown>, now: Date) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO ingest_jobs (job_id, org_id, space_id, created_at, updated_at)
            VALUES (${jobId}, ${orgId}, ${spaceId}, ${now}, ${now})`
          yield* sql`INSERT INTO ingest_items ${
            sql.insert(requests.map((request, position) => ({
              job_id: jobId,
              position,
              status: "queued",
              request: JSON.stringify(request)
            })))
          }`
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("JobRepo.create")),

      /** Cancels the items not yet started; answers the job afterwards. */
      cancel: (orgId: string, spaceId: string, jobId: string, now: Date) =>
        Effect.gen(function*() {
          const updated = yield* sql`UPDATE ingest_jobs SET updated_at = ${now}
            WHERE job_id = ${jobId} AND org_id = ${orgId} AND space_id = ${spaceId} RETURNING job_id`
          if (updated.length === 0) return Option.none<Job>()
          yield* sql`UPDATE ingest_items SET status = 'cancelled' WHERE job_id = ${jobId} AND status = 'queued'`
          return yield* get(orgId, spaceId, jobId)
        }).pipe(sql.withTransaction, storeFailure),

      /** The space's oldest queued items, in the order they were acknowledged. */
      nextQueued: (orgId: string, spaceId: string, limit: number) =>
        sql<QueuedItem>`SELECT i.job_id, i.position, i.request FROM ingest_items i
          JOIN ingest_jobs j ON j.job_id = i.job_id
          WHERE j.org_id = ${orgId} AND j.space_id = ${spaceId} AND i.status = 'queued'
          ORDER BY j.created_at, j.job_id, i.position LIMIT ${limit}`.pipe(storeFailure),

      /**
       * Settles a group of items in one statement, and touches each of their
       * jobs once; call inside the transaction that stores the completed
       * items' memories. Answers the items settled: any other was cancelled meanwhile.
       */
      settleInTransaction: (outcomes: ReadonlyArray<ItemOutcome>, now: Date) =>
        Effect.gen(function*() {
          if (outcomes.length === 0) return []
          const settled = yield* sql<{ job_id: string; position: number }>`UPDATE ingest_items i
            SET status = v.status, memory_ids = coalesce(v.memory_ids, '{}'), error = v.error
            FROM jsonb_to_recordset(${JSON.stringify(outcomes.map(outcomeRecord))}::jsonb)
              AS v(job_id text, position integer, status text, memory_ids text[], error text)
            WHERE i.job_id = v.job_id AND i.position = v.position AND i.status = 'queued'
            RETURNING i.job_id, i.position`
          const jobIds = [...new Set(settled.map((row) => row.job_id))]
          if (jobIds.length > 0) yield* sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ANY(${jobIds})`
          return settled
        }),

      /** Spaces with queued items, to resume after a restart. */
      spacesWithQueued: sql<{ org_id: string; space_id: string }>`SELECT DISTINCT j.org_id, j.space_id
        FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id WHERE i.status = 'queued'`.pipe(storeFailure)
    }
  })
}) {}
