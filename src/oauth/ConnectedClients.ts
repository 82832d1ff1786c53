/**
 * The grants MCP clients hold in an organization, as the console lists them,
 * and their revocation: the grant and every token of it stop working at once
 * on every node (tokens are checked against the store on each request).
 */
import { Clock, Effect } from "effect"
import type { ConnectedClient } from "../domain/ConnectedClients.ts"
import { NotFound } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { type ConnectedRow, OAuthRepo } from "../../services/store/OAuthRepo.ts"

const view = (row: ConnectedRow): ConnectedClient => ({
  id: row.grant_id,
  client_id: row.client_id,
  client_name: row.client_name,
  user_id: row.user_id,
  email: row.email,
  scope: row.scope,
  spaces: row.spaces,
  created_at: row.created_at.toISOString(),
  last_used_at: row.last_used_at?.toISOString() ?? null
})

/** Owners and admins act on the whole organization's grants; a member on their own. */
const whose = (principal: PrincipalShape) => (principal.role === "member" ? principal.userId : null)

export class ConnectedClients extends Effect.Service<ConnectedClients>()("engram/oauth/ConnectedClients", {
  dependencies: [OAuthRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* OAuthRepo
    return {
      list: (principal: PrincipalShape) =>
        Effect.map(repo.connected(principal.orgId, whose(principal)), (rows) => ({ items: rows.map(view), total: rows.length })),

      revoke: Effect.fn("ConnectedClients.revoke")(function*(principal: PrincipalShape, grantId: string) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const revoked = yield* repo.revokeInOrg(principal.orgId, grantId, whose(principal), now)
        if (!revoked) return yield* new NotFound({ message: `no connected client ${grantId}` })
      })
    }
  })
}) {}
