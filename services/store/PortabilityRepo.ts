/**
 * Exports and imports as jobs of their space (kinds `export` and `import`,
 * one item each), and the files they carry in `job_files`: an import's
 * upload, stored with its job in one transaction, or an export's output,
 * written part by part while it runs. The item's `progress` holds what the
 * job reports: its stage while it runs, its counts once it is done.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { Bytea, decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"
import { noteErasure } from "./Erasures.ts"

/** Bytes per stored part of a job's file. */
export const FILE_PART_BYTES = 1024 * 1024

export type PortabilityKind = "export" | "import"

/** What a running or finished export or import reports. */
export const PortabilityProgress = Schema.Struct({
  stage: Schema.Literal("exporting", "validating", "importing", "completed"),
  /** Lines written or read, the header and end lines not counted. */
  item_count: Schema.Number,
  bytes: Schema.Number,
  completed_at: Schema.NullOr(Schema.String),
  /** Imports: memories whose vector was computed here (another embedding model, or text a rule redacted). */
  reembedded: Schema.optional(Schema.Number),
  /** Imports: lines a rule of the space redacted something in. */
  redacted: Schema.optional(Schema.Number)
})
export type PortabilityProgress = typeof PortabilityProgress.Type

/** An import's request: the size of its uploaded file. */
const ImportRequest = Schema.Struct({ bytes: Schema.Number })

const JobRow = Schema.Struct({
  job_id: Schema.String,
  kind: Schema.Literal("export", "import"),
  status: Schema.Literal("queued", "completed", "failed", "cancelled"),
  request: Schema.Unknown,
  progress: Schema.NullOr(Schema.Unknown),
  error: Schema.NullOr(Schema.String),
  created_at: Timestamptz
})

export interface PortabilityJob {
  readonly jobId: string
  readonly kind: PortabilityKind
  readonly status: "queued" | "processing" | "completed" | "failed" | "cancelled"
  readonly progress: PortabilityProgress | null
  /** An import's uploaded bytes. */
  readonly uploaded: number
  readonly error: string | null
  readonly createdAt: Date
}

const decodeProgress = Schema.decodeUnknownOption(PortabilityProgress)
const decodeRequest = Schema.decodeUnknownOption(ImportRequest)

const toJob = (row: typeof JobRow.Type): PortabilityJob => {
  const progress = Option.getOrNull(Option.flatMap(Option.fromNullable(row.progress), decodeProgress))
  return {
    jobId: row.job_id,
    kind: row.kind,
    status: row.status === "queued" && progress !== null ? "processing" : row.status,
    progress,
    uploaded: Option.match(decodeRequest(row.request), { onNone: () => 0, onSome: (r) => r.bytes }),
    error: row.error,
    createdAt: row.created_at
  }
}

const decodeJobs = decodeRows(JobRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodePart = decodeRows(Schema.Struct({ data: Bytea }))
const decodeContents = decodeRows(Schema.Struct({ memories: Int8, documents: Int8, models: Int8 }))
const decodeHolders = decodeRows(Schema.Struct({ org_id: Schema.String, name: Schema.String }))

export class PortabilityRepo extends Effect.Service<PortabilityRepo>()("engram/store/PortabilityRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`j.job_id, j.kind, i.status, i.request, i.progress, i.error, j.created_at`

    const create = (space: SpaceRef, jobId: string, kind: PortabilityKind, request: unknown, now: Date) =>
      Effect.zipRight(
        sql`INSERT INTO ingest_jobs (job_id, org_id, space_id, kind, created_at, updated_at)
          VALUES (${jobId}, ${space.orgId}, ${space.spaceId}, ${kind}, ${now}, ${now})`,
        sql`INSERT INTO ingest_items (job_id, position, status, request)
          VALUES (${jobId}, 0, 'queued', ${JSON.stringify(request)}::jsonb)`
      )

    /** Settles the job's item (if still queued: a cancelled job stays cancelled); answers whether it did. */
    const settle = (jobId: string, status: "completed" | "failed", progress: PortabilityProgress | null, error: string | null, now: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE ingest_items SET status = ${status}, error = ${error},
            progress = coalesce(${progress === null ? null : JSON.stringify(progress)}::jsonb, progress)
          WHERE job_id = ${jobId} AND position = 0 AND status = 'queued' RETURNING job_id`
        yield* sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ${jobId}`
        return rows.length > 0
      })

    return {
      /** Runs `effect` in one transaction. */
      transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect.pipe(sql.withTransaction, storeFailure),

      /** An export of the space, queued. */
      createExport: (space: SpaceRef, jobId: string, now: Date) =>
        create(space, jobId, "export", {}, now).pipe(sql.withTransaction, storeFailure),

      /** An import, queued; call inside the transaction that stores its file (`putPart`). */
      createImport: (space: SpaceRef, jobId: string, bytes: number, now: Date) => create(space, jobId, "import", { bytes }, now),

      /** The space's oldest queued export or import. */
      next: (space: SpaceRef) =>
        sql`SELECT ${columns} FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id AND i.position = 0
          WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND j.kind IN ('export', 'import')
            AND i.status = 'queued'
          ORDER BY j.created_at, j.job_id LIMIT 1`.pipe(
          Effect.flatMap(decodeJobs),
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toJob)),
          storeFailure
        ),

      /** Whether the job is still to be done (not cancelled or settled meanwhile). */
      stillQueued: (jobId: string) =>
        sql`SELECT count(*) AS n FROM ingest_items WHERE job_id = ${jobId} AND status = 'queued'`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
          storeFailure
        ),

      /** Records how far a running job has come (it then reads as `processing`). */
      progress: (jobId: string, progress: PortabilityProgress, now: Date) =>
        Effect.zipRight(
          sql`UPDATE ingest_items SET progress = ${JSON.stringify(progress)}::jsonb
            WHERE job_id = ${jobId} AND position = 0 AND status = 'queued'`,
          sql`UPDATE ingest_jobs SET updated_at = ${now} WHERE job_id = ${jobId}`
        ).pipe(storeFailure),

      /** Completes the job with its counts; inside the caller's transaction. Answers whether it was still queued. */
      complete: (jobId: string, progress: PortabilityProgress, now: Date) => settle(jobId, "completed", progress, null, now),

      /** Fails the job with its reason; its file goes (an export's partial output, an import's upload). */
      fail: (jobId: string, error: string, now: Date) =>
        Effect.zipRight(
          settle(jobId, "failed", null, error, now),
          sql`DELETE FROM job_files WHERE job_id = ${jobId} RETURNING 1`.pipe(
            Effect.flatMap((rows) => rows.length === 0 ? Effect.void : noteErasure(sql, "uploaded-file"))
          )
        ).pipe(
          sql.withTransaction,
          storeFailure
        ),

      /** The space's jobs of one kind, newest first, and how many there are. */
      list: (space: SpaceRef, kind: PortabilityKind, page: { readonly limit: number; readonly offset: number }) => {
        const where = sql`j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND j.kind = ${kind}`
        return Effect.all({
          items: sql`SELECT ${columns} FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id AND i.position = 0
            WHERE ${where} ORDER BY j.created_at DESC, j.job_id DESC LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(
            Effect.flatMap(decodeJobs)
          ),
          total: sql`SELECT count(*) AS n FROM ingest_jobs j WHERE ${where}`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items: items.map(toJob), total: total[0]?.n ?? 0 })),
          storeFailure
        )
      },

      find: (space: SpaceRef, kind: PortabilityKind, jobId: string) =>
        sql`SELECT ${columns} FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id AND i.position = 0
          WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND j.kind = ${kind} AND j.job_id = ${jobId}`.pipe(
          Effect.flatMap(decodeJobs),
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toJob)),
          storeFailure
        ),

      /** What an import would land on: the space's memories, documents and memory models. */
      contents: (space: SpaceRef) =>
        sql`SELECT
            (SELECT count(*) FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}) AS memories,
            (SELECT count(*) FROM documents WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}) AS documents,
            (SELECT count(*) FROM memory_models WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}) AS models`.pipe(
          Effect.flatMap(decodeContents),
          Effect.map((rows) => rows[0] ?? { memories: 0, documents: 0, models: 0 }),
          storeFailure
        ),

      /** Whether an import of the space is queued or running. */
      importPending: (space: SpaceRef) =>
        sql`SELECT count(*) AS n FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id
          WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND j.kind = 'import' AND i.status = 'queued'`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
          storeFailure
        ),

      /** Keeps the space's `keep` newest exports that are done; older ones go with their files. */
      pruneExports: (space: SpaceRef, keep: number) =>
        sql`DELETE FROM ingest_jobs WHERE job_id IN (
            SELECT j.job_id FROM ingest_jobs j JOIN ingest_items i ON i.job_id = j.job_id AND i.position = 0
            WHERE j.org_id = ${space.orgId} AND j.space_id = ${space.spaceId} AND j.kind = 'export' AND i.status <> 'queued'
            ORDER BY j.created_at DESC, j.job_id DESC OFFSET ${keep})`.pipe(Effect.asVoid),

      putPart: (jobId: string, part: number, data: Uint8Array) =>
        sql`INSERT INTO job_files (job_id, part, data) VALUES (${jobId}, ${part}, ${data})`.pipe(Effect.asVoid),

      /** One part of a job's file, or none past its end. */
      readPart: (jobId: string, part: number) =>
        sql`SELECT data FROM job_files WHERE job_id = ${jobId} AND part = ${part}`.pipe(
          Effect.flatMap(decodePart),
          Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.data)),
          storeFailure
        ),

      dropFile: (jobId: string) =>
        sql`DELETE FROM job_files WHERE job_id = ${jobId} RETURNING 1`.pipe(
          Effect.flatMap((rows) => rows.length === 0 ? Effect.void : noteErasure(sql, "uploaded-file"))
        ),

      /** The organizations holding a space with this id, with their names (the CLI names a space by its id alone). */
      holders: (spaceId: string) =>
        sql`SELECT s.org_id, o.name FROM spaces s JOIN organizations o ON o.id = s.org_id
          WHERE s.space_id = ${spaceId} ORDER BY s.org_id`.pipe(Effect.flatMap(decodeHolders), storeFailure)
    }
  })
}) {}
