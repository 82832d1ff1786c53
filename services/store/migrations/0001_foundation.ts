import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE organizations (
      id text PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL UNIQUE,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE memberships (
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, user_id)
    )`
  yield* sql`CREATE INDEX memberships_user ON memberships (user_id)`
  yield* sql`
    CREATE TABLE sessions (
      id text PRIMARY KEY,
      secret_hash text NOT NULL,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      created_by text REFERENCES users(id) ON DELETE SET NULL,
      name text NOT NULL,
      env text NOT NULL CHECK (env IN ('live', 'test')),
      key_prefix text NOT NULL,
      secret_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_org ON api_keys (org_id, created_at)`
  yield* sql`
    CREATE TABLE spaces (
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      space_id text NOT NULL,
      name text NOT NULL,
      space_type text NOT NULL,
      description text NOT NULL DEFAULT '',
      created_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id)
    )`
  yield* sql`CREATE INDEX spaces_by_id ON spaces (space_id)`
})
