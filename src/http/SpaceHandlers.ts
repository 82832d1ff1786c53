import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal, requireRole } from "../domain/Principal.ts"
import { Spaces } from "../spaces/Spaces.ts"

/** Spaces answer to an API key or a session; deleting one needs owner or admin. */
export const SpaceHandlers = HttpApiBuilder.group(EngramApi, "spaces", (handlers) =>
  Effect.map(Spaces, (spaces) =>
    handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(Principal, (principal) => spaces.list(principal, urlParams)))
      .handle("create", ({ payload }) => Effect.flatMap(Principal, (principal) => spaces.create(principal, payload)))
      .handle("get", ({ path }) => Effect.flatMap(Principal, (principal) => spaces.view(principal, path.space_id)))
      .handle("delete", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          spaces.get(principal, path.space_id).pipe(
            Effect.zipRight(requireRole("owner", "admin")),
            Effect.zipRight(spaces.delete(principal, path.space_id))
          )))))
