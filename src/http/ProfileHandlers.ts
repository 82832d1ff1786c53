import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { SpaceProfiles } from "../reason/SpaceProfiles.ts"
import { UserProfiles } from "../reason/UserProfiles.ts"

/** The space profile (writes owner-only) and user profiles. */
export const ProfileHandlers = HttpApiBuilder.group(EngramApi, "profiles", (handlers) =>
  Effect.gen(function*() {
    const spaceProfiles = yield* SpaceProfiles
    const userProfiles = yield* UserProfiles
    return handlers
      .handle("getSpaceProfile", ({ path }) => Effect.flatMap(Principal, (p) => spaceProfiles.get(p, path.space_id)))
      .handle("putSpaceProfile", ({ path, payload }) =>
        Effect.flatMap(Principal, (p) => spaceProfiles.put(p, path.space_id, payload)))
      .handle("deleteSpaceProfile", ({ path }) => Effect.flatMap(Principal, (p) => spaceProfiles.reset(p, path.space_id)))
      .handle("getUserProfile", ({ path, urlParams }) =>
        Effect.flatMap(Principal, (p) => userProfiles.get(p, path.space_id, path.user_id, urlParams)))
      .handle("askUser", ({ path, payload }) =>
        Effect.flatMap(Principal, (p) => userProfiles.ask(p, path.space_id, path.user_id, payload)))
  }))
