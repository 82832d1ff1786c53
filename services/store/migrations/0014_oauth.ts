import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * MCP authorization (OAuth 2.1): clients registered dynamically, the grants
 * users approve (an organization, a scope, the spaces reached; revocable as a
 * whole), single-use authorization codes and the access and refresh tokens
 * of each grant. Codes and tokens are stored as SHA-256 digests only.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE oauth_clients (
      id text PRIMARY KEY,
      client_name text,
      redirect_uris jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE oauth_grants (
      id text PRIMARY KEY,
      client_id text NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      scope text NOT NULL,
      spaces jsonb,
      resource text NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX oauth_grants_by_org ON oauth_grants (org_id, created_at)`
  yield* sql`
    CREATE TABLE oauth_codes (
      code_hash text PRIMARY KEY,
      grant_id text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
      redirect_uri text NOT NULL,
      code_challenge text NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`
    CREATE TABLE oauth_tokens (
      token_hash text PRIMARY KEY,
      grant_id text NOT NULL REFERENCES oauth_grants(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id)`
})
