/**
 * Documents (uploaded files, parsed offline into memories) and the entity
 * graph (canonical entities and their co-occurrence across a space's
 * memories).
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, FileTooLarge, Forbidden, NotFound, RateLimited, SpaceLimitReached, TooManyFiles, UploadTooLarge, ValidationError } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment, SafeString } from "./SafeText.ts"
import { Page } from "./Strict.ts"

export const MAX_FILES = 20
export const MAX_FILE_BYTES = 25 * 1024 * 1024
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024

/** How an uploaded file becomes memories (documented in docs/documents.md). */
export const DocumentStrategy = Schema.Literal("chunks", "pages", "facts")
export type DocumentStrategy = typeof DocumentStrategy.Type

/** The form fields of an upload besides its files (read from the stream, checked by the upload service). */
export const UploadFields = Schema.Struct({
  tags: Schema.optional(Schema.String),
  user_id: Schema.optional(Schema.String),
  agent_id: Schema.optional(Schema.String),
  session_id: Schema.optional(Schema.String),
  strategy: Schema.optional(Schema.String)
})

export const UploadAccepted = Schema.Struct({ space_id: Schema.String, job_ids: Schema.Array(Schema.String) })

export const DocumentRecord = Schema.Struct({
  document_id: Schema.String,
  source: Schema.Literal("file", "custom", "memory"),
  /** The uploaded file's name; null for documents written through the memory endpoints. */
  filename: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  text_length: Schema.Number,
  memory_count: Schema.Number,
  tags: Schema.Array(Schema.String)
})
export type DocumentRecord = typeof DocumentRecord.Type

export const DocumentList = Schema.Struct({
  documents: Schema.Array(DocumentRecord),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
})

export const DocumentListQuery = Schema.Struct({
  ...Page(100, 1000).fields,
  q: Schema.optional(SafeString.pipe(Schema.maxLength(256))),
  /** Only documents of these sources (comma-separated: `file`, `custom`, `memory`); all when absent. */
  source: Schema.optional(Schema.String.pipe(
    Schema.pattern(/^(file|custom|memory)(,(file|custom|memory))*$/, { message: () => "source: a comma-separated list of file, custom and memory" })
  ))
})
export type DocumentListQuery = typeof DocumentListQuery.Type

export const EntityItem = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  mention_count: Schema.Number,
  first_seen: Schema.String,
  last_seen: Schema.String
})
export type EntityItem = typeof EntityItem.Type

export const Observation = Schema.Struct({ text: Schema.String, mentioned_at: Schema.String })

export const EntityDetail = Schema.Struct({ ...EntityItem.fields, observations: Schema.Array(Observation) })
export type EntityDetail = typeof EntityDetail.Type

export const EntityList = Schema.Struct({
  items: Schema.Array(EntityItem),
  total: Schema.Number,
  limit: Schema.Number,
  offset: Schema.Number
})

export const GraphQuery = Schema.Struct({
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 2000)), { default: () => 500 }),
  min_count: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)), {
    default: () => 1
  })
})
export type GraphQuery = typeof GraphQuery.Type

export const GraphNode = Schema.Struct({ id: Schema.String, label: Schema.String, mention_count: Schema.Number })
export const GraphEdge = Schema.Struct({
  source: Schema.String,
  target: Schema.String,
  source_label: Schema.String,
  target_label: Schema.String,
  weight: Schema.Number,
  last_co_occurred: Schema.NullOr(Schema.String)
})
export const Graph = Schema.Struct({
  nodes: Schema.Array(GraphNode),
  edges: Schema.Array(GraphEdge),
  total_entities: Schema.Number,
  total_edges: Schema.Number
})
export type Graph = typeof Graph.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })
const DocumentPath = Schema.Struct({ space_id: PathSegment, document_id: PathSegment })
const EntityPath = Schema.Struct({ space_id: PathSegment, entity_id: PathSegment })

export const UPLOAD_PATH = "/v1/spaces/:space_id/documents"

export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("upload", UPLOAD_PATH)
      .setPath(SpacePath)
      // Form fields are small (tags and scope ids); files are limited by the upload service as they stream in.
      .setPayload(HttpApiSchema.MultipartStream(UploadFields, { maxFieldSize: 64 * 1024 }))
      .addSuccess(UploadAccepted, { status: 202 })
      .addError(BadRequest)
      .addError(TooManyFiles)
      .addError(FileTooLarge)
      .addError(UploadTooLarge)
      .addError(ValidationError)
  )
  .add(HttpApiEndpoint.get("list", UPLOAD_PATH).setPath(SpacePath).setUrlParams(DocumentListQuery).addSuccess(DocumentList))
  .add(HttpApiEndpoint.get("get", "/v1/spaces/:space_id/documents/:document_id").setPath(DocumentPath).addSuccess(DocumentRecord))
  .add(
    HttpApiEndpoint.del("delete", "/v1/spaces/:space_id/documents/:document_id")
      .setPath(DocumentPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.get("entities", "/v1/spaces/:space_id/entities")
      .setPath(SpacePath)
      .setUrlParams(Page(100, 1000))
      .addSuccess(EntityList)
  )
  .add(HttpApiEndpoint.get("entity", "/v1/spaces/:space_id/entities/:entity_id").setPath(EntityPath).addSuccess(EntityDetail))
  .add(HttpApiEndpoint.get("graph", "/v1/spaces/:space_id/graph").setPath(SpacePath).setUrlParams(GraphQuery).addSuccess(Graph))
  .addError(NotFound)
  .addError(Forbidden)
  .addError(RateLimited)
  .addError(SpaceLimitReached)
  .middleware(Authentication)
{}
