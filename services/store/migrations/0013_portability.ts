import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Exports and imports of a space.
 * - A memory's id is unique within its space, not across the database: an
 *   import keeps the ids of the space it came from, and may land beside that
 *   very space. `memories` is keyed by (id, org_id, space_id); its history
 *   names the space too (backfilled), under a foreign key on the same three.
 * - Exports and imports are jobs of their space (kinds `export`, `import`),
 *   run by its entity like uploaded documents. `job_files` holds the bytes of
 *   an import's upload, or of an export's output, in parts.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memory_history DROP CONSTRAINT memory_history_memory_id_fkey`
  yield* sql`ALTER TABLE memory_history ADD COLUMN org_id text`
  yield* sql`ALTER TABLE memory_history ADD COLUMN space_id text`
  yield* sql`UPDATE memory_history h SET org_id = m.org_id, space_id = m.space_id FROM memories m WHERE m.id = h.memory_id`
  // The foreign key cascaded deletes until now, so no entry lacks its memory; this only makes sure of it.
  yield* sql`DELETE FROM memory_history WHERE org_id IS NULL`
  yield* sql`ALTER TABLE memory_history ALTER COLUMN org_id SET NOT NULL`
  yield* sql`ALTER TABLE memory_history ALTER COLUMN space_id SET NOT NULL`
  yield* sql`ALTER TABLE memories DROP CONSTRAINT memories_pkey`
  // The id leads: a key led by (org_id, space_id) would be the planner's pick (PGlite keeps no statistics) for every
  // lookup within a space, over the indexes made for them (measured: a document's memories found by scanning the space).
  yield* sql`ALTER TABLE memories ADD CONSTRAINT memories_pkey PRIMARY KEY (id, org_id, space_id)`
  yield* sql`ALTER TABLE memory_history ADD CONSTRAINT memory_history_memory_fkey
    FOREIGN KEY (org_id, space_id, memory_id) REFERENCES memories (org_id, space_id, id) ON DELETE CASCADE`
  yield* sql`DROP INDEX memory_history_memory`
  yield* sql`CREATE INDEX memory_history_memory ON memory_history (org_id, space_id, memory_id, id)`

  yield* sql`ALTER TABLE ingest_jobs DROP CONSTRAINT ingest_jobs_kind_check`
  yield* sql`ALTER TABLE ingest_jobs ADD CONSTRAINT ingest_jobs_kind_check
    CHECK (kind IN ('ingest', 'model_refresh', 'document', 'export', 'import'))`
  yield* sql`CREATE INDEX ingest_jobs_portability ON ingest_jobs (org_id, space_id, kind, created_at)
    WHERE kind IN ('export', 'import')`
  yield* sql`
    CREATE TABLE job_files (
      job_id text NOT NULL REFERENCES ingest_jobs (job_id) ON DELETE CASCADE,
      part integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (job_id, part)
    )`
})
