/**
 * A space's reason default. A name is resolved through the catalog when it is
 * set and stored as the full model id, so a tier sent here does not follow a
 * later re-pointing of that tier. Null (or DELETE) means the platform default.
 */
import { Clock, Effect, Option, Schema } from "effect"
import { UnsupportedModel } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { PutReasonSettings, ReasonSettings as Settings } from "../domain/Reason.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { Catalog, type CatalogShape } from "../../services/llm/Catalog.ts"
import { SettingsRepo } from "../../services/store/SettingsRepo.ts"

const StoredReasonSettings = Schema.Struct({ model: Schema.String })
const decodeStored = Schema.decodeUnknown(StoredReasonSettings)

/** A served model by any of its names, or `unsupported_model` listing what is served. */
export const resolveModel = (catalog: CatalogShape, name: string) =>
  Option.match(catalog.resolve(name), {
    onNone: () =>
      Effect.fail(new UnsupportedModel({ message: `model ${name} is not served by this deployment; served: ${catalog.served}` })),
    onSome: Effect.succeed
  })

export class ReasonSettings extends Effect.Service<ReasonSettings>()("engram/reason/ReasonSettings", {
  dependencies: [Spaces.Default, SettingsRepo.Default],
  effect: Effect.gen(function*() {
    const spaces = yield* Spaces
    const settings = yield* SettingsRepo
    const catalog = yield* Catalog

    /** The stored full model id of a space known to exist, if one is set. */
    const storedModel = (orgId: string, spaceId: string) =>
      settings.get(orgId, spaceId, "reason").pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeedNone,
          onSome: (value) => Effect.map(Effect.orDie(decodeStored(value)), (stored) => Option.some(stored.model))
        }))
      )

    const get = Effect.fn("ReasonSettings.get")(function*(principal: PrincipalShape, spaceId: string) {
      yield* spaces.get(principal, spaceId)
      const model = yield* storedModel(principal.orgId, spaceId)
      return { space_id: spaceId, model: Option.getOrNull(model) } satisfies Settings
    })

    const put = Effect.fn("ReasonSettings.put")(function*(principal: PrincipalShape, spaceId: string, body: PutReasonSettings) {
      yield* spaces.get(principal, spaceId)
      if (body.model === undefined || body.model === null) {
        yield* settings.delete(principal.orgId, spaceId, "reason")
        return { space_id: spaceId, model: null } satisfies Settings
      }
      const spec = yield* resolveModel(catalog, body.model)
      yield* settings.put(principal.orgId, spaceId, "reason", { model: spec.id }, new Date(yield* Clock.currentTimeMillis))
      return { space_id: spaceId, model: spec.id } satisfies Settings
    })

    const reset = Effect.fn("ReasonSettings.reset")(function*(principal: PrincipalShape, spaceId: string) {
      yield* spaces.get(principal, spaceId)
      yield* settings.delete(principal.orgId, spaceId, "reason")
    })

    return { get, put, reset, storedModel }
  })
}) {}
