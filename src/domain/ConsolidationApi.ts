/**
 * A space's consolidation, as operators and tests see it (not in the spec's
 * field lists; designed like its neighbours): whether it runs, with which
 * engine, how many facts are pending, and its latest runs with the counts of
 * their `memory.consolidated` events.
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, NotFound } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"

export const ConsolidationRun = Schema.Struct({
  engine: Schema.String,
  facts: Schema.Number,
  observations_created: Schema.Number,
  observations_updated: Schema.Number,
  observations_deleted: Schema.Number,
  error_message: Schema.NullOr(Schema.String),
  started_at: Schema.String,
  finished_at: Schema.String
})

export const ConsolidationStatus = Schema.Struct({
  space_id: Schema.String,
  enabled: Schema.Boolean,
  engine: Schema.String,
  pending_facts: Schema.Number,
  runs: Schema.Array(ConsolidationRun)
})
export type ConsolidationStatus = typeof ConsolidationStatus.Type

export class ConsolidationApi extends HttpApiGroup.make("consolidation")
  .add(
    HttpApiEndpoint.get("status", "/v1/spaces/:space_id/consolidation")
      .setPath(Schema.Struct({ space_id: PathSegment }))
      .addSuccess(ConsolidationStatus)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .middleware(Authentication)
{}
