import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Consolidation: a fact is pending until a run has considered it
 * (`consolidated_at`); a fact replaced by a newer value of the same attribute
 * names the fact that superseded it; every run is recorded with its counts,
 * the data of its `memory.consolidated` event.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memories ADD COLUMN consolidated_at timestamptz`
  yield* sql`ALTER TABLE memories ADD COLUMN superseded_by text`
  yield* sql`CREATE INDEX memories_pending ON memories (org_id, space_id, created_at)
    WHERE type = 'fact' AND consolidated_at IS NULL AND state = 'active'`
  yield* sql`
    CREATE TABLE consolidation_runs (
      id bigserial PRIMARY KEY,
      org_id text NOT NULL,
      space_id text NOT NULL,
      engine text NOT NULL,
      facts integer NOT NULL,
      observations_created integer NOT NULL,
      observations_updated integer NOT NULL,
      observations_deleted integer NOT NULL,
      error_message text,
      started_at timestamptz NOT NULL,
      finished_at timestamptz NOT NULL,
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX consolidation_runs_space ON consolidation_runs (org_id, space_id, id)`
})
