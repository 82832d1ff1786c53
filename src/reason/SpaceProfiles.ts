/**
 * The space profile: a mission and a disposition (skepticism, literalism,
 * empathy, 1 to 5, default 3) that shape synthesis, never plain retrieval.
 * Anyone of the organization reads it; only an owner changes it.
 */
import { Clock, Effect, Option, Schema } from "effect"
import { Principal, type PrincipalShape, requireRole } from "../domain/Principal.ts"
import { DEFAULT_DISPOSITION, DEFAULT_PROFILE, type PutSpaceProfile, type SpaceProfile, StoredSpaceProfile } from "../domain/Profiles.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { SettingsRepo } from "../../services/store/SettingsRepo.ts"

const decodeStored = Schema.decodeUnknown(StoredSpaceProfile)

export class SpaceProfiles extends Effect.Service<SpaceProfiles>()("engram/reason/SpaceProfiles", {
  dependencies: [Spaces.Default, SettingsRepo.Default],
  effect: Effect.gen(function*() {
    const spaces = yield* Spaces
    const settings = yield* SettingsRepo

    /** The stored profile of a space known to exist, or the defaults. */
    const stored = (orgId: string, spaceId: string) =>
      settings.get(orgId, spaceId, "profile").pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.succeed(DEFAULT_PROFILE),
          // What this service wrote decodes; anything else is a bug, not a caller's error.
          onSome: (value) => Effect.orDie(decodeStored(value))
        }))
      )

    const view = (spaceId: string, name: string, profile: StoredSpaceProfile): SpaceProfile => ({
      space_id: spaceId,
      name,
      mission: profile.mission,
      disposition: profile.disposition
    })

    const ownerOnly = (principal: PrincipalShape) => requireRole("owner").pipe(Effect.provideService(Principal, principal))

    const get = Effect.fn("SpaceProfiles.get")(function*(principal: PrincipalShape, spaceId: string) {
      const space = yield* spaces.get(principal, spaceId)
      return view(spaceId, space.name, yield* stored(principal.orgId, spaceId))
    })

    const put = Effect.fn("SpaceProfiles.put")(function*(principal: PrincipalShape, spaceId: string, body: PutSpaceProfile) {
      const space = yield* spaces.get(principal, spaceId)
      yield* ownerOnly(principal)
      const profile: StoredSpaceProfile = {
        mission: body.mission ?? "",
        disposition: {
          skepticism: body.disposition?.skepticism ?? DEFAULT_DISPOSITION.skepticism,
          literalism: body.disposition?.literalism ?? DEFAULT_DISPOSITION.literalism,
          empathy: body.disposition?.empathy ?? DEFAULT_DISPOSITION.empathy
        }
      }
      yield* settings.put(principal.orgId, spaceId, "profile", profile, new Date(yield* Clock.currentTimeMillis))
      return view(spaceId, space.name, profile)
    })

    const reset = Effect.fn("SpaceProfiles.reset")(function*(principal: PrincipalShape, spaceId: string) {
      yield* spaces.get(principal, spaceId)
      yield* ownerOnly(principal)
      yield* settings.delete(principal.orgId, spaceId, "profile")
    })

    return { get, put, reset, stored }
  })
}) {}
