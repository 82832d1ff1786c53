import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireSession } from "../domain/Principal.ts"
import { ConnectedClients } from "../oauth/ConnectedClients.ts"

/** Connected MCP clients need a session; members see and revoke their own, owners and admins everyone's. */
export const ConnectedClientHandlers = HttpApiBuilder.group(EngramApi, "connectedClients", (handlers) =>
  Effect.map(ConnectedClients, (clients) =>
    handlers
      .handle("list", () => Effect.flatMap(requireSession, clients.list))
      .handle("revoke", ({ path }) => Effect.flatMap(requireSession, (p) => clients.revoke(p, path.grant_id)))))
