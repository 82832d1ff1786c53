/**
 * Queued writes. A job's items are stored in the same transaction that
 * acknowledges them; an item is marked done in the transaction that stores its
 * memories, so after a crash every acknowledged item is stored exactly once.
 * The queue is the table: whichever node owns the space drains it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import type { OrgId, SpaceRef } from "../../src/domain/Ids.ts"
import { OrgId as OrgIdSchema, SpaceId as SpaceIdSchema } from "../../src/domain/Ids.ts"
import type { Job } from "../../src/domain/Memories.ts"
import { WriteItem } from "../../src/domain/SpaceProtocol.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"
import type { ServiceUnavailable } from "../../src/domain/Errors.ts"

/** A queued item: its write, or why its stored payload could not be read. */
export interface QueuedItem {
  readonly jobId: string
  readonly position: number
  readonly write: Either.Either<WriteItem, string>
  /** When the job was acknowledged: how far behind the queue is. */
  readonly queuedAt: Date
  /** The span that queued it (its request's trace), when one was recorded. */
  readonly trace: QueuedTrace | null
}

/** A span's W3C ids, as a job keeps them. */
export interface QueuedTrace {
  readonly traceId: string
  readonly spanId: string
}

/** How one queued item ended: stored (with the ids of its memories) or failed. */
export type ItemOutcome =
  | { readonly _tag: "Completed"; readonly item: QueuedItem; readonly memoryIds: ReadonlyArray<string> }
  | { readonly _tag: "Failed"; readonly item: QueuedItem; readonly error: string }

const outcomeRecord = (outcome: ItemOutcome) => ({
  job_id: outcome.item.jobId,
  position: outcome.item.position,
  status: outcome._tag === "Completed" ? "completed" : "failed",
  memory_ids: outcome._tag === "Completed" ? outcome.memoryIds : [],
  error: outcome._tag === "Failed" ? outcome.error : null
})

/** An uploaded file, queued as a job of its space; its bytes wait in document_files. */
export const DocumentRequest = Schema.Struct({
  documentId: Schema.String,
  filename: Schema.String,
  contentType: Schema.NullOr(Schema.String),
  size: Schema.Number,
  strategy: Schema.Literal("chunks", "pages", "facts"),
  tags: Schema.Array(Schema.String),
  userId: Schema.NullOr(Schema.String),
  agentId: Schema.NullOr(Schema.String),
  sessionId: Schema.NullOr(Schema.String),
  memberId: Schema.NullOr(Schema.String),
  eventTime: Schema.String
})
export type DocumentRequest = typeof DocumentRequest.Type

/** How far a document job has come, as its item records it while it runs. */
export const DocumentProgress = Schema.Struct({
  stage: Schema.Literal("parsing", "storing"),
  format: Schema.NullOr(Schema.String),
  unit: Schema.NullOr(Schema.String),
  done: Schema.Number,
  total: Schema.NullOr(Schema.Number)
})
export type DocumentProgress = typeof DocumentProgress.Type

export interface QueuedDocument {
  readonly item: QueuedItem
  readonly request: Either.Either<DocumentRequest, string>
}

const JobRow = Schema.Struct({
  job_id: Schema.String,
  kind: Schema.String,
  request: Schema.NullOr(Schema.Unknown),
  progress: Schema.NullOr(Schema.Unknown),
  space_id: Schema.String,
  created_at: Timestamptz,
  updated_at: Timestamptz,
  total: Int8,
  queued: Int8,
  completed: Int8,
  failed: Int8,
  cancelled: Int8,
  memory_ids: Schema.NullOr(Schema.Array(Schema.String)),
  error: Schema.NullOr(Schema.String)
})

const QueuedRow = Schema.Struct({
  job_id: Schema.String,
  position: Int8,
  request: Schema.Unknown,
  created_at: Timestamptz,
  trace_id: Schema.NullOr(Schema.String),
  span_id: Schema.NullOr(Schema.String)
})

const decodeWrite = Schema.decodeUnknownEither(WriteItem)

/** A memory model's refresh, queued as a job of its space. */
export const RefreshRequest = Schema.Struct({ modelId: Schema.String })

export interface QueuedRefresh {
  readonly item: QueuedItem
  readonly modelId: Either.Either<string, string>
}

const decodeRefresh = Schema.decodeUnknownEither(RefreshRequest)
const decodeDocument = Schema.decodeUnknownEither(DocumentRequest)
const decodeProgress = Schema.decodeUnknownOption(DocumentProgress)

const traceOf = (row: typeof QueuedRow.Type): QueuedTrace | null =>
  row.trace_id !== null && row.span_id !== null ? { traceId: row.trace_id, spanId: row.span_id } : null

const toQueued = (row: typeof QueuedRow.Type): QueuedItem => ({
  jobId: row.job_id,
  position: row.position,
  write: Either.mapLeft(
    decodeWrite(row.request),
    (error) => `the queued write could not be read: ${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 200)}`
  ),
  queuedAt: row.created_at,
  trace: traceOf(row)
})

/** The job's state follows from its items. */
export const jobStatus = (
  counts: { queued: number; completed: number; failed: number; cancelled: number },
  started = false
): Job["status"] => {
  if (counts.queued > 0) return started || counts.completed + counts.failed + counts.cancelled > 0 ? "processing" : "queued"
  if (counts.completed > 0) return "completed"
  if (counts.failed > 0) return "failed"
  return "cancelled"
}

/** A document job's file and progress, from its one item. */
const documentOf = (row: typeof JobRow.Type, status: Job["status"]): Job["document"] => {
  const request = Either.getOrUndefined(decodeDocument(row.request))
  if (row.kind !== "document" || request === undefined) return undefined
  const progress = Option.getOrUndefined(decodeProgress(row.progress))
  const stage = status === "queued" || status === "processing" ? progress?.stage ?? "queued" : status
  return {
    document_id: request.documentId,
    filename: request.filename,
    size: request.size,
    format: progress?.format ?? null,
    stage,
    unit: progress?.unit ?? null,
    done: progress?.done ?? 0,
    total: progress?.total ?? null
  }
}

const toJob = (row: typeof JobRow.Type): Job => {
  const items = { total: row.total, queued: row.queued, completed: row.completed, failed: row.failed, cancelled: row.cancelled }
  const status = jobStatus(items, row.progress !== null)
  const document = documentOf(row, status)
  return {
    job_id: row.job_id,
    space_id: row.space_id,
    status,
    items,
    memory_ids: [...(row.memory_ids ?? [])],
    error: row.error,
    ...(document === undefined ? {} : { document }),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString()
  }
}

const decodeJobs = decodeRows(JobRow)
const decodeQueued = decodeRows(QueuedRow)
const decodeSettled = decodeRows(Schema.Struct({ job_id: Schema.String, position: Int8 }))
const decodeSpaces = decodeRows(Schema.Struct({ org_id: OrgIdSchema, space_id: SpaceIdSchema }))

export class JobRepo extends Effect.Service<JobRepo>()("engram/store/JobRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const get = (orgId: OrgId, spaceId: string, jobId: string) =>
      sql`SELECT j.job_id, j.kind, j.space_id, j.created_at, j.updated_at,
          (array_agg(i.request ORDER BY i.position))[1] AS request,
          (array_agg(i.progress ORDER BY i.position))[1] AS progress,
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
        GROUP BY j.job_id`.pipe(
        Effect.flatMap(decodeJobs),
        Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toJob))),
        storeFailure
      )

    return {
      get,

      /**
       * A job of writes; the positions in `refused` are failed from the start
       * with their reason (a space's rule blocked them). `also` runs in the
       * same transaction (the rules' events queued to the outbox).
       */
      create: (
        space: SpaceRef,
        jobId: string,
        writes: ReadonlyArray<WriteItem>,
        now: Date,
        refused: ReadonlyMap<number, string> = new Map(),
        also: Effect.Effect<unknown, ServiceUnavailable> = Effect.void
      ) =>
        Effect.gen(function*() {
          // The caller's span (the request's), which the drain step storing these items links to.
          const span = Option.getOrNull(yield* Effect.option(Effect.currentSpan))
          yield* sql`INSERT INTO ingest_jobs (job_id, org_id, space_id, created_at, updated_at, trace_id, span_id)
            VALUES (${jobId}, ${space.orgId}, ${space.spaceId}, ${now}, ${now}, ${span?.traceId ?? null}, ${span?.spanId ?? null})`
          yield* sql`INSERT INTO ingest_items ${
            sql.insert(writes.map((write, position) => ({
              job_id: jobId,
              position,
              status: refused.has(position) ? "failed" : "queued",
              request: JSON.stringify(Schema.encodeSync(WriteItem)(write)),
              error: refused.get(position) ?? null
            })))
          }`
          yield* also
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("JobRepo.create")),

      /** Cancels the items not yet started; answers the job afterwards. */
      cancel: (orgId: OrgId, spaceId: string, jobId: string, now: Date) =>
        Effect.gen(function*() {
          const updated = yield* sql`UPDATE ingest_jobs SET updated_at = ${now}
            WHERE job_id = ${jobId} AND org_id = ${orgId} AND space_id = ${spaceId} RETURNING job_id`
          if (updated.length === 0) return Option.none<Job>()
          yield* sql`UPDATE ingest_items SET status = 'cancelled' WHERE job_id = ${jobId} AND status = 'queued'`
          return yield* get(orgId, spaceId, jobId)
        }).pipe(sql.withTransaction, storeFailure),

      /** A refresh of a memory model, as a job of one item. */
      createRefresh: (space: SpaceRef, jobId: string, modelId: string, now: Date) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO ingest_jobs (job_id, org_id, space_id, kind, created_at, updated_at)
            VALUES (${jobId}, ${space.orgId}, ${space.spaceId}, 'model_refresh', ${now}, ${now})`
          yield* sql`INSERT INTO ingest_items (job_id, position, status, request)
            VALUES (${jobId}, 0, 'queued', ${JSON.stringify(Schema.encodeSync(RefreshRequest)({ modelId }))}::jsonb)`
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("JobRepo.createRefresh")),

      /** The space's oldest queued writes, in the order they were acknowledged. */
      nextQueued: (space: SpaceRef, limit: number) =>
        sql`SELECT i.job_id, i.position, i.request, j.created_at, j.trace_id, j.span_id FROM ingest_items i
          JOIN ingest_jobs j ON j.job_id = i.job_id
          WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND i.status = 'queued' AND j.kind = 'ingest'
          ORDER BY j.created_at, j.job_id, i.position LIMIT ${limit}`.pipe(
          Effect.flatMap(decodeQueued),
          Effect.map((rows) => rows.map(toQueued)),
          storeFailure
        ),

      /** Uploaded files as document jobs, one job (of one item) per file; call inside the upload's transaction. */
      createDocuments: (space: SpaceRef, files: ReadonlyArray<{ readonly jobId: string; readonly request: DocumentRequest }>, now: Date) =>
        Effect.forEach(files, ({ jobId, request }) =>
          Effect.zipRight(
            sql`INSERT INTO ingest_jobs (job_id, org_id, space_id, kind, created_at, updated_at)
              VALUES (${jobId}, ${space.orgId}, ${space.spaceId}, 'document', ${now}, ${now})`,
            sql`INSERT INTO ingest_items (job_id, position, status, request)
              VALUES (${jobId}, 0, 'queued', ${JSON.stringify(Schema.encodeSync(DocumentRequest)(request))}::jsonb)`
          ), { discard: true }),

      /** The space's oldest queued document. */
      nextDocument: (space: SpaceRef) =>
        sql`SELECT i.job_id, i.position, i.request, j.created_at, j.trace_id, j.span_id FROM ingest_items i
          JOIN ingest_jobs j ON j.job_id = i.job_id
          WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND i.status = 'queued' AND j.kind = 'document'
          ORDER BY j.created_at, j.job_id LIMIT 1`.pipe(
          Effect.flatMap(decodeQueued),
          Effect.map((rows) =>
            rows.map((row): QueuedDocument => ({
              item: { jobId: row.job_id, position: row.position, write: Either.left("a document, not a write"), queuedAt: row.created_at, trace: traceOf(row) },
              request: Either.mapLeft(decodeDocument(row.request), (error) =>
                `the queued upload could not be read: ${ParseResult.TreeFormatter.formatErrorSync(error).slice(0, 200)}`)
            }))
          ),
          storeFailure
        ),

      /** Records how far a queued item has come (while it is still queued; a cancelled one is left alone). */
      progress: (jobId: string, position: number, progress: DocumentProgress, now: Date) =>
        Effect.zipRight(
          sql`UPDATE ingest_items SET progress = ${JSON.stringify(Schema.encodeSync(DocumentProgress)(progress))}::jsonb
            WHERE job_id = ${jobId} AND position = ${position} AND status = 'queued'`,
          sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ${jobId}`
        ).pipe(storeFailure),

      /** The space's oldest queued model refresh. */
      nextRefresh: (space: SpaceRef) =>
        sql`SELECT i.job_id, i.position, i.request, j.created_at, j.trace_id, j.span_id FROM ingest_items i
          JOIN ingest_jobs j ON j.job_id = i.job_id
          WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND i.status = 'queued'
            AND j.kind = 'model_refresh'
          ORDER BY j.created_at, j.job_id LIMIT 1`.pipe(
          Effect.flatMap(decodeQueued),
          Effect.map((rows) =>
            rows.map((row): QueuedRefresh => ({
              item: { jobId: row.job_id, position: row.position, write: Either.left("a refresh, not a write"), queuedAt: row.created_at, trace: traceOf(row) },
              modelId: Either.mapLeft(decodeRefresh(row.request), () => "the queued refresh could not be read").pipe(
                Either.map((r) => r.modelId)
              )
            }))
          ),
          storeFailure
        ),

      /**
       * Settles a group of items in one statement, and touches each of their
       * jobs once; call inside the transaction that stores the completed
       * items' memories. Answers the items settled: any other was settled or
       * cancelled meanwhile (the status check makes two racing writers safe).
       */
      settle: (outcomes: ReadonlyArray<ItemOutcome>, now: Date) =>
        Effect.gen(function*() {
          if (outcomes.length === 0) return []
          // A settled write's request (its whole content) is no longer needed: only a document's stays, for its job's view.
          const settled = yield* sql`UPDATE ingest_items i
            SET status = v.status, memory_ids = coalesce(v.memory_ids, '{}'), error = v.error,
              request = CASE WHEN j.kind = 'document' THEN i.request ELSE '{}'::jsonb END
            FROM jsonb_to_recordset(${JSON.stringify(outcomes.map(outcomeRecord))}::jsonb)
              AS v(job_id text, position integer, status text, memory_ids text[], error text), ingest_jobs j
            WHERE i.job_id = v.job_id AND i.position = v.position AND i.status = 'queued' AND j.job_id = i.job_id
            RETURNING i.job_id, i.position`.pipe(Effect.flatMap(decodeSettled))
          const jobIds = [...new Set(settled.map((row) => row.job_id))]
          if (jobIds.length > 0) yield* sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ANY(${jobIds})`
          return settled
        }),

      /** Spaces with queued items: the waker sends each a Wake. */
      spacesWithQueued: sql`SELECT DISTINCT j.org_id, j.space_id
        FROM ingest_items i JOIN ingest_jobs j ON i.job_id = j.job_id WHERE i.status = 'queued'`.pipe(
        Effect.flatMap(decodeSpaces),
        Effect.map((rows): ReadonlyArray<SpaceRef> => rows.map((row) => ({ orgId: row.org_id, spaceId: row.space_id }))),
        storeFailure
      )
    }
  })
}) {}
