/**
 * A space's extraction settings, kept as one settings document and read from
 * the store by the space's entity for every write it extracts, so a change
 * applies to the next write whichever node holds the space.
 */
import { Clock, Effect, Option, Schema } from "effect"
import {
  DEFAULT_EXTRACTION,
  type ExtractionSettings as Settings,
  ExtractionSettingsValues,
  type PutExtractionSettings
} from "../domain/ExtractionSettings.ts"
import { ValidationError } from "../domain/Errors.ts"
import { Principal, type PrincipalShape, requireRole } from "../domain/Principal.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { SettingsRepo } from "../../services/store/SettingsRepo.ts"
import {
  type ExtractedMemory,
  ExtractionError,
  type ExtractionInput,
  extractVerbatim,
  Extractor,
  type ExtractorShape
} from "./Extractor.ts"

const decodeStored = Schema.decodeUnknown(ExtractionSettingsValues)

interface Stored {
  readonly values: ExtractionSettingsValues
  readonly updatedAt: Date | null
}

/** A blank text is no text. */
const present = (text: string | null | undefined) => (text === undefined || text === null || text.trim() === "" ? null : text)

/**
 * One write's extraction under the space's settings: `verbatim` keeps the
 * content whole (whatever the extractor), `auto` and `custom` run the
 * extractor with the guidance, `custom` with the custom prompt too.
 */
export const extractWith = (
  extractor: ExtractorShape,
  settings: ExtractionSettingsValues,
  input: ExtractionInput
): Effect.Effect<ReadonlyArray<ExtractedMemory>, ExtractionError> => {
  if (settings.mode === "verbatim") {
    return Effect.try({
      try: () => extractVerbatim(input),
      catch: (cause) => new ExtractionError({ message: `extraction failed: ${String(cause)}`, cause })
    })
  }
  return extractor.extract({
    ...input,
    guidance: settings.guidance ?? undefined,
    customPrompt: settings.mode === "custom" ? settings.custom_prompt ?? undefined : undefined
  })
}

export class ExtractionSettings extends Effect.Service<ExtractionSettings>()("engram/ingestion/ExtractionSettings", {
  dependencies: [SettingsRepo.Default, Spaces.Default],
  effect: Effect.gen(function*() {
    const repo = yield* SettingsRepo
    const spaces = yield* Spaces
    const extractor = yield* Extractor

    /** The stored settings of a space and when they were put; a document that does not decode is a bug (a defect). */
    const stored = (orgId: string, spaceId: string) =>
      repo.getStamped(orgId, spaceId, "extraction").pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed<Stored>({ values: DEFAULT_EXTRACTION, updatedAt: null }),
          onSome: (row) => Effect.map(Effect.orDie(decodeStored(row.value)), (values): Stored => ({ values, updatedAt: row.updatedAt }))
        }))
      )

    /** What the entity extracts a write with (no space check: the entity's space exists). */
    const values = (orgId: string, spaceId: string) =>
      Effect.map(stored(orgId, spaceId), (s) => s.values).pipe(Effect.withSpan("ExtractionSettings.values"))

    const view = (spaceId: string, values: ExtractionSettingsValues, updatedAt: Date | null): Settings => ({
      space_id: spaceId,
      ...values,
      updated_at: updatedAt === null ? null : updatedAt.toISOString()
    })

    /** Owner or admin, after the space is known to be the caller's (404/403 first). */
    const mayChange = (principal: PrincipalShape, spaceId: string) =>
      spaces.get(principal, spaceId).pipe(
        Effect.zipRight(requireRole("owner", "admin").pipe(Effect.provideService(Principal, principal)))
      )

    const get = Effect.fn("ExtractionSettings.get")(function*(principal: PrincipalShape, spaceId: string) {
      yield* spaces.get(principal, spaceId)
      const { updatedAt, values } = yield* stored(principal.orgId, spaceId)
      return view(spaceId, values, updatedAt)
    })

    const put = Effect.fn("ExtractionSettings.put")(function*(principal: PrincipalShape, spaceId: string, body: PutExtractionSettings) {
      yield* mayChange(principal, spaceId)
      const next: ExtractionSettingsValues = {
        mode: body.mode ?? "auto",
        guidance: present(body.guidance),
        custom_prompt: present(body.custom_prompt)
      }
      if (next.mode === "custom" && next.custom_prompt === null) {
        return yield* new ValidationError({ message: "custom_prompt: required (and not blank) when mode is custom" })
      }
      if (next.mode === "custom" && !extractor.prompted) {
        return yield* new ValidationError({
          message: "mode: custom needs an extraction model, and this deployment has none (EXTRACTION_MODEL is not set)"
        })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* repo.put(principal.orgId, spaceId, "extraction", next, now)
      return view(spaceId, next, now)
    })

    const reset = Effect.fn("ExtractionSettings.reset")(function*(principal: PrincipalShape, spaceId: string) {
      yield* mayChange(principal, spaceId)
      yield* repo.delete(principal.orgId, spaceId, "extraction")
    })

    return { values, get, put, reset }
  })
}) {}
