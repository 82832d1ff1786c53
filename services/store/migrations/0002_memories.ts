import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE documents (
      org_id text NOT NULL,
      space_id text NOT NULL,
      document_id text NOT NULL,
      source text NOT NULL CHECK (source IN ('file', 'custom', 'memory')),
      text_length integer NOT NULL DEFAULT 0,
      tags text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, document_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE memories (
      id text PRIMARY KEY,
      org_id text NOT NULL,
      space_id text NOT NULL,
      document_id text NOT NULL,
      text text NOT NULL,
      source_text text NOT NULL DEFAULT '',
      context text NOT NULL DEFAULT '',
      type text NOT NULL CHECK (type IN ('fact', 'note', 'experience', 'summary')),
      state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'retired')),
      entities jsonb NOT NULL DEFAULT '[]',
      metadata jsonb NOT NULL DEFAULT '{}',
      tags text[] NOT NULL DEFAULT '{}',
      user_id text,
      agent_id text,
      session_id text,
      member_id text,
      event_time timestamptz NOT NULL,
      occurred_start timestamptz,
      occurred_end timestamptz,
      source_ids text[] NOT NULL DEFAULT '{}',
      position integer NOT NULL DEFAULT 0,
      embedding bytea,
      embedder text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      FOREIGN KEY (org_id, space_id, document_id) REFERENCES documents (org_id, space_id, document_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX memories_space ON memories (org_id, space_id, created_at, id)`
  yield* sql`CREATE INDEX memories_document ON memories (org_id, space_id, document_id)`
  yield* sql`
    CREATE TABLE memory_history (
      id bigserial PRIMARY KEY,
      memory_id text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
      change text NOT NULL,
      previous jsonb,
      changed_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX memory_history_memory ON memory_history (memory_id, id)`
  yield* sql`
    CREATE TABLE ingest_jobs (
      job_id text PRIMARY KEY,
      org_id text NOT NULL,
      space_id text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE ingest_items (
      job_id text NOT NULL REFERENCES ingest_jobs (job_id) ON DELETE CASCADE,
      position integer NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'completed', 'failed', 'cancelled')),
      request jsonb NOT NULL,
      memory_ids text[] NOT NULL DEFAULT '{}',
      error text,
      PRIMARY KEY (job_id, position)
    )`
  yield* sql`CREATE INDEX ingest_items_pending ON ingest_items (job_id) WHERE status = 'queued'`
})
