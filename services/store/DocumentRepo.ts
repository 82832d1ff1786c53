/**
 * Documents as the API lists them, and the bytes of uploaded files waiting
 * for their space to parse them. A file is kept in parts of `PART_BYTES`, so
 * neither storing nor reading it needs more than one part in a statement.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import type { DocumentListQuery, DocumentRecord } from "../../src/domain/Documents.ts"
import { Bytea, decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"
import { noteErasure } from "./Erasures.ts"

export const PART_BYTES = 1024 * 1024

const DocumentRow = Schema.Struct({
  document_id: Schema.String,
  source: Schema.Literal("file", "custom", "memory"),
  filename: Schema.NullOr(Schema.String),
  created_at: Timestamptz,
  updated_at: Timestamptz,
  text_length: Int8,
  memory_count: Int8,
  tags: Schema.Array(Schema.String)
})

const toRecord = (row: typeof DocumentRow.Type): DocumentRecord => ({
  document_id: row.document_id,
  source: row.source,
  filename: row.filename,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
  text_length: row.text_length,
  memory_count: row.memory_count,
  tags: [...row.tags]
})

const decodeDocuments = decodeRows(DocumentRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodePart = decodeRows(Schema.Struct({ data: Bytea }))
const decodeParts = decodeRows(Schema.Struct({ parts: Int8 }))

export class DocumentRepo extends Effect.Service<DocumentRepo>()("engram/store/DocumentRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`d.document_id, d.source, d.filename, d.created_at, d.updated_at, d.text_length, d.tags,
      (SELECT count(*) FROM memories m WHERE m.org_id = d.org_id AND m.space_id = d.space_id
        AND m.document_id = d.document_id) AS memory_count`)

    return {
      /** Newest first; `q` is a case-insensitive substring of the document id. */
      list: (space: SpaceRef, query: DocumentListQuery) => {
        const conditions = [sql`d.org_id = ${space.orgId}`, sql`d.space_id = ${space.spaceId}`]
        const q = query.q?.trim() ?? ""
        if (q !== "") conditions.push(sql`strpos(lower(d.document_id), ${q.toLowerCase()}) > 0`)
        if (query.source !== undefined) conditions.push(sql`d.source = ANY(${[...new Set(query.source.split(","))]})`)
        const where = sql.and(conditions)
        return Effect.all({
          documents: sql`SELECT ${columns} FROM documents d WHERE ${where}
            ORDER BY d.created_at DESC, d.document_id LIMIT ${query.limit} OFFSET ${query.offset}`.pipe(
            Effect.flatMap(decodeDocuments)
          ),
          total: sql`SELECT count(*) AS n FROM documents d WHERE ${where}`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ documents, total }) => ({
            documents: documents.map(toRecord),
            total: total[0]?.n ?? 0,
            limit: query.limit,
            offset: query.offset
          })),
          storeFailure
        )
      },

      find: (space: SpaceRef, documentId: string) =>
        sql`SELECT ${columns} FROM documents d
          WHERE d.org_id = ${space.orgId} AND d.space_id = ${space.spaceId} AND d.document_id = ${documentId}`.pipe(
          Effect.flatMap(decodeDocuments),
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toRecord))),
          storeFailure
        ),

      /** One part of an uploaded file; call inside the transaction that creates its job. */
      putPart: (jobId: string, part: number, data: Uint8Array) =>
        sql`INSERT INTO document_files (job_id, part, data) VALUES (${jobId}, ${part}, ${data})`,

      /** How many parts a queued file has. */
      parts: (jobId: string) =>
        sql`SELECT count(*) AS parts FROM document_files WHERE job_id = ${jobId}`.pipe(
          Effect.flatMap(decodeParts),
          Effect.map((rows) => rows[0]?.parts ?? 0),
          storeFailure
        ),

      /** A queued file's bytes, read part by part into one buffer. */
      read: (jobId: string, size: number) =>
        Effect.gen(function*() {
          const bytes = new Uint8Array(size)
          let offset = 0
          for (let part = 0; offset < size; part++) {
            const rows = yield* sql`SELECT data FROM document_files WHERE job_id = ${jobId} AND part = ${part}`.pipe(
              Effect.flatMap(decodePart)
            )
            const data = rows[0]?.data
            if (data === undefined) return Option.none<Uint8Array>()
            bytes.set(data.subarray(0, size - offset), offset)
            offset += data.length
          }
          return Option.some(bytes)
        }).pipe(storeFailure),

      /** Drops a file's bytes once its job is settled; call inside the transaction that settles it. */
      dropFile: (jobId: string) =>
        sql`DELETE FROM document_files WHERE job_id = ${jobId} RETURNING 1`.pipe(
          Effect.flatMap((rows) => rows.length === 0 ? Effect.void : noteErasure(sql, "uploaded-file"))
        )
    }
  })
}) {}
