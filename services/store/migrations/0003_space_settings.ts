import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Per-space settings documents: the space profile, chat settings and reason settings, one row each. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE space_settings (
      org_id text NOT NULL,
      space_id text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('profile', 'chat', 'reason')),
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, kind),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
})
