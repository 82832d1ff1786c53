import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NoFields, NotFound, RateLimited, SpaceLimitReached, ValidationError , SpaceUnavailable } from "./Errors.ts"
import {
  BatchRequest,
  Explanation,
  Job,
  LegacyAddRequest,
  LegacyAddResponse,
  MemoryHistory,
  MemoryItem,
  MemoryList,
  MemoryListQuery,
  PatchMemoryRequest,
  Queued,
  Receipt,
  RecordRequest,
  RecordResponse,
  RetrieveRequest,
  RetrieveResponse,
  SearchRequest,
  SearchResponse
} from "./Memories.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"

const JobPath = Schema.Struct({ space_id: PathSegment, job_id: PathSegment })
const MemoryPath = Schema.Struct({ space_id: PathSegment, memory_id: PathSegment })
const ReceiptPath = Schema.Struct({ request_id: PathSegment })

export class MemoryApi extends HttpApiGroup.make("memories")
  .add(
    HttpApiEndpoint.post("record", "/v1/record")
      .setPayload(RecordRequest)
      .addSuccess(RecordResponse)
      .addSuccess(Queued, { status: 202 })
      .addError(ValidationError)
  )
  .add(HttpApiEndpoint.post("batch", "/v1/record/batch").setPayload(BatchRequest).addSuccess(Queued, { status: 202 }))
  .add(
    HttpApiEndpoint.post("legacyAdd", "/v1/memories").setPayload(LegacyAddRequest).addSuccess(LegacyAddResponse).addError(ValidationError)
  )
  .add(HttpApiEndpoint.get("job", "/v1/spaces/:space_id/jobs/:job_id").setPath(JobPath).addSuccess(Job))
  .add(HttpApiEndpoint.del("cancelJob", "/v1/spaces/:space_id/jobs/:job_id").setPath(JobPath).addSuccess(Job))
  .add(
    HttpApiEndpoint.get("list", "/v1/spaces/:space_id/memories")
      .setPath(Schema.Struct({ space_id: PathSegment }))
      .setUrlParams(MemoryListQuery)
      .addSuccess(MemoryList)
  )
  .add(
    HttpApiEndpoint.patch("patch", "/v1/spaces/:space_id/memories/:memory_id")
      .setPath(MemoryPath)
      .setPayload(PatchMemoryRequest)
      .addSuccess(MemoryItem)
      .addError(NoFields)
      .addError(ValidationError)
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/spaces/:space_id/memories/:memory_id")
      .setPath(MemoryPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .add(
    HttpApiEndpoint.get("history", "/v1/spaces/:space_id/memories/:memory_id/history")
      .setPath(MemoryPath)
      .addSuccess(MemoryHistory)
  )
  .add(HttpApiEndpoint.post("retrieve", "/v1/retrieve").setPayload(RetrieveRequest).addSuccess(RetrieveResponse))
  .add(HttpApiEndpoint.post("search", "/v1/search").setPayload(SearchRequest).addSuccess(SearchResponse))
  .add(
    HttpApiEndpoint.get("receipt", "/v1/receipts/:request_id")
      .setPath(ReceiptPath)
      .addSuccess(Receipt)
  )
  .add(
    HttpApiEndpoint.get("explain", "/v1/receipts/:request_id/explain")
      .setPath(ReceiptPath)
      .setUrlParams(Schema.Struct({ memory_id: PathSegment }))
      .addSuccess(Explanation)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .addError(SpaceUnavailable)
  .addError(RateLimited)
  .addError(SpaceLimitReached)
  .middleware(Authentication)
{}
