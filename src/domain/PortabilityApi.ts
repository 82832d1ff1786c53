/**
 * Exports and imports of a space (session only; owners and admins of the
 * space's organization): an export is a job whose NDJSON file is downloaded
 * once it completes; an import takes such a file into an empty space, as a
 * job whose status is also at `GET /v1/spaces/{id}/jobs/{job_id}`.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, InsufficientRole, NotFound, PayloadTooLarge, RateLimited, SessionRequired } from "./Errors.ts"
import { JobStatus } from "./Memories.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"
import { Page, Paged } from "./Strict.ts"

export const NDJSON = "application/x-ndjson"

/** The largest export file `POST .../imports` takes (the CLI takes any size). */
export const MAX_IMPORT_BYTES = 512 * 1024 * 1024

export const EXPORTS_PATH = "/v1/spaces/:space_id/exports"
export const IMPORTS_PATH = "/v1/spaces/:space_id/imports"

export const JobAccepted = Schema.Struct({ job_id: Schema.String, space_id: Schema.String, status: Schema.Literal("queued") })

export const ExportJob = Schema.Struct({
  job_id: Schema.String,
  status: JobStatus,
  created_at: Schema.String,
  completed_at: Schema.NullOr(Schema.String),
  /** Lines of the file besides its header and end line (memories, documents, models, user profiles, settings). */
  item_count: Schema.Number,
  /** Size of the file (0 until it is complete). */
  bytes: Schema.Number,
  error: Schema.NullOr(Schema.String)
})
export type ExportJob = typeof ExportJob.Type

export const ImportJob = Schema.Struct({
  ...ExportJob.fields,
  /** Memories whose vector was computed on import (another embedding model, or a text a rule redacted). */
  reembedded: Schema.Number,
  /** Lines a rule of the space redacted something in. */
  redacted: Schema.Number
})
export type ImportJob = typeof ImportJob.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })
const JobPath = Schema.Struct({ space_id: PathSegment, job_id: PathSegment })

const NdjsonFile = HttpApiSchema.Text({ contentType: NDJSON }).annotations({
  description: "An export file: NDJSON, a header line, one line per record, an end line (docs/api.md, Exports and imports)."
})

export class PortabilityApi extends HttpApiGroup.make("portability")
  .add(HttpApiEndpoint.post("createExport", EXPORTS_PATH).setPath(SpacePath).addSuccess(JobAccepted, { status: 202 }))
  .add(HttpApiEndpoint.get("listExports", EXPORTS_PATH).setPath(SpacePath).setUrlParams(Page(20, 100)).addSuccess(Paged(ExportJob)))
  .add(
    HttpApiEndpoint.get("download", "/v1/spaces/:space_id/exports/:job_id/download")
      .setPath(JobPath)
      .addSuccess(NdjsonFile)
  )
  .add(
    HttpApiEndpoint.post("createImport", IMPORTS_PATH)
      .setPath(SpacePath)
      // Read by the handler as a stream, under MAX_IMPORT_BYTES.
      .setPayload(NdjsonFile)
      .addSuccess(JobAccepted, { status: 202 })
      .addError(BadRequest)
      .addError(PayloadTooLarge)
  )
  .add(HttpApiEndpoint.get("listImports", IMPORTS_PATH).setPath(SpacePath).setUrlParams(Page(20, 100)).addSuccess(Paged(ImportJob)))
  .addError(NotFound)
  .addError(Forbidden)
  .addError(InsufficientRole)
  .addError(SessionRequired)
  .addError(Conflict)
  .addError(RateLimited)
  .middleware(Authentication)
{}
