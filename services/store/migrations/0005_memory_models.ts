import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Memory models (standing syntheses) and their history; jobs gain a kind, so a
 * refresh is a job of the space like a queued write.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ingest_jobs ADD COLUMN kind text NOT NULL DEFAULT 'ingest' CHECK (kind IN ('ingest', 'model_refresh'))`
  yield* sql`
    CREATE TABLE memory_models (
      org_id text NOT NULL,
      space_id text NOT NULL,
      model_id text NOT NULL,
      name text NOT NULL,
      query text NOT NULL,
      content text,
      tags text[] NOT NULL DEFAULT '{}',
      max_tokens integer NOT NULL,
      trigger_mode text NOT NULL CHECK (trigger_mode IN ('full', 'delta')),
      refresh_on_new boolean NOT NULL,
      trigger_types text[],
      last_refreshed_at timestamptz,
      refreshed_query text,
      stale boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, model_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE memory_model_history (
      id bigserial PRIMARY KEY,
      org_id text NOT NULL,
      space_id text NOT NULL,
      model_id text NOT NULL,
      previous_content text NOT NULL,
      changed_at timestamptz NOT NULL,
      FOREIGN KEY (org_id, space_id, model_id) REFERENCES memory_models (org_id, space_id, model_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX memory_model_history_model ON memory_model_history (org_id, space_id, model_id, id)`
})
