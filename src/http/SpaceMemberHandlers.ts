import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { SpaceMembers } from "../spaces/SpaceMembers.ts"

/** A space's members need a session of the owning organization; changing them needs owner or admin. */
export const SpaceMemberHandlers = HttpApiBuilder.group(EngramApi, "spaceMembers", (handlers) =>
  Effect.map(SpaceMembers, (members) => {
    const manager = requireSession.pipe(Effect.zipRight(requireRole("owner", "admin")))
    return handlers
      .handle("list", ({ path }) => Effect.flatMap(requireSession, (p) => members.list(p, path.space_id)))
      .handle("add", ({ path, payload }) => Effect.flatMap(manager, (p) => members.add(p, path.space_id, payload)))
      .handle("remove", ({ path }) => Effect.flatMap(manager, (p) => members.remove(p, path.space_id, path.org_id)))
  }))
