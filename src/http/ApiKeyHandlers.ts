import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { ApiKeys } from "../identity/ApiKeys.ts"

/** Keys are managed with a session; any member may list them, owners and admins create and revoke. */
export const ApiKeyHandlers = HttpApiBuilder.group(EngramApi, "apiKeys", (handlers) =>
  Effect.map(ApiKeys, (apiKeys) =>
    handlers
      .handle("list", () => Effect.flatMap(requireSession, (principal) => apiKeys.list(principal.orgId)))
      .handle("create", ({ payload }) =>
        requireSession.pipe(
          Effect.zipRight(requireRole("owner", "admin")),
          Effect.flatMap((principal) => apiKeys.create(principal, payload))
        ))
      .handle("revoke", ({ path }) =>
        requireSession.pipe(
          Effect.zipRight(requireRole("owner", "admin")),
          Effect.flatMap((principal) => apiKeys.revoke(principal.orgId, path.id))
        ))))
