/**
 * Extraction settings: how a space's writes become memories. `auto` (the
 * default) runs the deployment's extractor, `verbatim` stores each write
 * whole, `custom` gives the extraction model the space's own prompt. PUT
 * replaces the whole record, DELETE restores the defaults.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, InsufficientRole, NotFound, SessionRequired, ValidationError } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment, SafeString } from "./SafeText.ts"
import { strict } from "./Strict.ts"

export const ExtractionMode = Schema.Literal("auto", "verbatim", "custom")
export type ExtractionMode = typeof ExtractionMode.Type

export const GUIDANCE_MAX = 2000
export const CUSTOM_PROMPT_MAX = 8000

/** What the store keeps (kind `extraction`); blank texts are kept as null. */
export const ExtractionSettingsValues = Schema.Struct({
  mode: ExtractionMode,
  guidance: Schema.NullOr(Schema.String),
  custom_prompt: Schema.NullOr(Schema.String)
})
export type ExtractionSettingsValues = typeof ExtractionSettingsValues.Type

export const DEFAULT_EXTRACTION: ExtractionSettingsValues = { mode: "auto", guidance: null, custom_prompt: null }

export const ExtractionSettings = Schema.Struct({
  space_id: Schema.String,
  ...ExtractionSettingsValues.fields,
  /** When the settings were last put; null while the space runs on the defaults. */
  updated_at: Schema.NullOr(Schema.String)
})
export type ExtractionSettings = typeof ExtractionSettings.Type

/** Omitted fields return to their defaults; `custom` needs a non-blank custom_prompt and an extraction model. */
export const PutExtractionSettings = strict(Schema.Struct({
  mode: Schema.optional(ExtractionMode),
  guidance: Schema.optional(Schema.NullOr(SafeString.pipe(Schema.maxLength(GUIDANCE_MAX)))),
  custom_prompt: Schema.optional(Schema.NullOr(SafeString.pipe(Schema.maxLength(CUSTOM_PROMPT_MAX))))
}))
export type PutExtractionSettings = typeof PutExtractionSettings.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })
const PATH = "/v1/spaces/:space_id/extraction-settings"

export class ExtractionSettingsApi extends HttpApiGroup.make("extractionSettings")
  .add(HttpApiEndpoint.get("get", PATH).setPath(SpacePath).addSuccess(ExtractionSettings).addError(SessionRequired))
  .add(
    HttpApiEndpoint.put("put", PATH)
      .setPath(SpacePath)
      .setPayload(PutExtractionSettings)
      .addSuccess(ExtractionSettings)
      .addError(ValidationError)
      .addError(SessionRequired)
      .addError(InsufficientRole)
  )
  .add(
    HttpApiEndpoint.del("reset", PATH)
      .setPath(SpacePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(SessionRequired)
      .addError(InsufficientRole)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .middleware(Authentication)
{}
