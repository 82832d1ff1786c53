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

      nextQueued: (orgId: string, spaceId: string) =>
        sql<QueuedItem>`SELECT i.job_id, i.position, i.request FROM ingest_items i
          JOIN ingest_jobs j ON j.job_id = i.job_id
          WHERE j.org_id = ${orgId} AND j.space_id = ${spaceId} AND i.status = 'queued'
          ORDER BY j.created_at, j.job_id, i.position LIMIT 1`.pipe(
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        ),

      /** Marks an item done; call inside the transaction that stored its memories. Answers false if it was cancelled meanwhile. */
      completeInTransaction: (item: QueuedItem, memoryIds: ReadonlyArray<string>, now: Date) =>
        Effect.gen(function*() {
          const rows = yield* sql`UPDATE ingest_items SET status = 'completed', memory_ids = ${memoryIds as Array<string>}
            WHERE job_id = ${item.job_id} AND position = ${item.position} AND status = 'queued' RETURNING position`
          yield* sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ${item.job_id}`
          return rows.length > 0
        }),

      fail: (item: QueuedItem, error: string, now: Date) =>
        Effect.zipRight(
          sql`UPDATE ingest_items SET status = 'failed', error = ${error}
            WHERE job_id = ${item.job_id} AND position = ${item.position} AND status = 'queued'`,
          sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ${item.job_id}`
        ).pipe(sql.withTransaction, storeFailure),

      /** Spaces with queued items, to resume after a restart. */
      spacesWithQueued: sql<{ org_id: string; space_id: string }>`SELECT DISTINCT j.org_id, j.space_id
        FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id WHERE i.status = 'queued'`.pipe(storeFailure)
    }
  })
}) {}
