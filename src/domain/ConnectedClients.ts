/**
 * MCP clients connected through OAuth (control plane, session only): the
 * grants in force in the organization, and their revocation. Owners and
 * admins see and revoke every grant of the organization; a member only their own.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { NotFound, SessionRequired } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"

export const ConnectedClient = Schema.Struct({
  id: Schema.String,
  client_id: Schema.String,
  client_name: Schema.NullOr(Schema.String),
  user_id: Schema.String,
  email: Schema.String,
  scope: Schema.String,
  /** null: every space of the organization, including new ones. */
  spaces: Schema.NullOr(Schema.Array(Schema.String)),
  created_at: Schema.String,
  /** When the client last obtained tokens (signed in or refreshed). */
  last_used_at: Schema.NullOr(Schema.String)
})
export type ConnectedClient = typeof ConnectedClient.Type

export const ConnectedClientList = Schema.Struct({ items: Schema.Array(ConnectedClient), total: Schema.Number })

export class ConnectedClientsApi extends HttpApiGroup.make("connectedClients")
  .add(HttpApiEndpoint.get("list", "/v1/oauth/grants").addSuccess(ConnectedClientList))
  .add(
    HttpApiEndpoint.del("revoke", "/v1/oauth/grants/:grant_id")
      .setPath(Schema.Struct({ grant_id: PathSegment }))
      .addSuccess(HttpApiSchema.NoContent)
  )
  .addError(NotFound)
  .addError(SessionRequired)
  .middleware(Authentication)
{}
