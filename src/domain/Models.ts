/** The model catalog on the wire (`GET /v1/models`), in the list envelope of the chat-completions world. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Principal.ts"

export const CatalogEntry = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  created: Schema.Number,
  owned_by: Schema.String,
  short_name: Schema.String,
  display_name: Schema.String,
  alias: Schema.NullOr(Schema.String),
  default: Schema.Boolean,
  credits_per_1k_input: Schema.Number,
  credits_per_1k_output: Schema.Number,
  requests_per_minute: Schema.Number,
  relative_cost: Schema.Number
})
export type CatalogEntry = typeof CatalogEntry.Type

export const CatalogList = Schema.Struct({ object: Schema.Literal("list"), data: Schema.Array(CatalogEntry) })

export class ModelsApi extends HttpApiGroup.make("models")
  .add(HttpApiEndpoint.get("list", "/v1/models").addSuccess(CatalogList))
  .middleware(Authentication)
{}
