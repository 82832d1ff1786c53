import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The control plane: projects grouping an organization's spaces, invitations
 * by email, spaces shared with other organizations, per-space extraction
 * settings (a settings kind) and the space's rules (secret detectors).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE projects (
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      project_id text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, project_id),
      UNIQUE (org_id, name)
    )`
  yield* sql`ALTER TABLE spaces ADD COLUMN project_id text`
  // A space names a project of its own organization; a project holding spaces cannot go.
  yield* sql`ALTER TABLE spaces ADD CONSTRAINT spaces_project
    FOREIGN KEY (org_id, project_id) REFERENCES projects (org_id, project_id)`
  yield* sql`CREATE INDEX spaces_by_project ON spaces (org_id, project_id)`
  yield* sql`
    CREATE TABLE invitations (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('admin', 'member')),
      status text NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'withdrawn')),
      invited_by text REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      answered_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX invitations_one_pending ON invitations (org_id, lower(email)) WHERE status = 'pending'`
  yield* sql`CREATE INDEX invitations_by_email ON invitations (lower(email), status)`
  yield* sql`
    CREATE TABLE space_members (
      org_id text NOT NULL,
      space_id text NOT NULL,
      member_org_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      access text NOT NULL CHECK (access IN ('read', 'write')),
      added_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, member_org_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX space_members_by_member ON space_members (member_org_id, space_id)`
  yield* sql`ALTER TABLE space_settings DROP CONSTRAINT space_settings_kind_check`
  yield* sql`ALTER TABLE space_settings ADD CONSTRAINT space_settings_kind_check
    CHECK (kind IN ('profile', 'chat', 'reason', 'extraction'))`
  yield* sql`
    CREATE TABLE space_rules (
      org_id text NOT NULL,
      space_id text NOT NULL,
      rule_id text NOT NULL,
      name text NOT NULL,
      detector text NOT NULL,
      pattern text,
      action text NOT NULL CHECK (action IN ('redact', 'block')),
      enabled boolean NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, rule_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  // Spaces made before rules existed get the rule a new space starts with.
  yield* sql`INSERT INTO space_rules (org_id, space_id, rule_id, name, detector, pattern, action, enabled, created_at)
    SELECT org_id, space_id, 'rul_' || substr(md5(org_id || '/' || space_id), 1, 16), 'Redact API keys', 'api_key', NULL,
      'redact', true, created_at
    FROM spaces`
})
