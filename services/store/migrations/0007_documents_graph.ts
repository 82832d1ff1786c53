import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { SpaceRef } from "../../../src/domain/Ids.ts"
import { OrgId, SpaceId } from "../../../src/domain/Ids.ts"
import { EntityRef } from "../../../src/domain/Memory.ts"
import { decodeRows, Timestamptz } from "../Columns.ts"
import { makeEntityStatements } from "../EntityRows.ts"

/**
 * Uploaded documents and the entity graph.
 * - Document jobs: one job per uploaded file; the file's bytes wait in
 *   `document_files` (in parts) until the space's owner has parsed and
 *   stored it, so an upload survives a crash and any node can finish it.
 *   An item being worked on reports its progress.
 * - The graph: canonical entities per space, their mentions by raw memories,
 *   and co-occurrence edges, maintained with the memories they count. The
 *   memories already stored are counted here.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ingest_jobs DROP CONSTRAINT ingest_jobs_kind_check`
  yield* sql`ALTER TABLE ingest_jobs ADD CONSTRAINT ingest_jobs_kind_check
    CHECK (kind IN ('ingest', 'model_refresh', 'document'))`
  yield* sql`ALTER TABLE ingest_items ADD COLUMN progress jsonb`
  yield* sql`ALTER TABLE documents ADD COLUMN filename text`
  yield* sql`
    CREATE TABLE document_files (
      job_id text NOT NULL REFERENCES ingest_jobs (job_id) ON DELETE CASCADE,
      part integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (job_id, part)
    )`
  yield* sql`
    CREATE TABLE entities (
      org_id text NOT NULL,
      space_id text NOT NULL,
      entity_id text NOT NULL,
      name text NOT NULL,
      kind text NOT NULL,
      mention_count integer NOT NULL,
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, entity_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX entities_rank ON entities (org_id, space_id, mention_count DESC, entity_id)`
  yield* sql`
    CREATE TABLE entity_mentions (
      org_id text NOT NULL,
      space_id text NOT NULL,
      entity_id text NOT NULL,
      memory_id text NOT NULL,
      mentioned_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, entity_id, memory_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX entity_mentions_memory ON entity_mentions (org_id, space_id, memory_id)`
  yield* sql`CREATE INDEX entity_mentions_recent ON entity_mentions (org_id, space_id, entity_id, mentioned_at DESC)`
  yield* sql`
    CREATE TABLE entity_edges (
      org_id text NOT NULL,
      space_id text NOT NULL,
      source text NOT NULL,
      target text NOT NULL,
      weight integer NOT NULL,
      last_co_occurred timestamptz,
      PRIMARY KEY (org_id, space_id, source, target),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX entity_edges_target ON entity_edges (org_id, space_id, target)`

  // The memories stored before the graph existed, counted space by space.
  const statements = makeEntityStatements(sql)
  const spaces = yield* sql`SELECT DISTINCT org_id, space_id FROM memories`.pipe(
    Effect.flatMap(decodeRows(Schema.Struct({ org_id: OrgId, space_id: SpaceId })))
  )
  const decodeRaw = decodeRows(Schema.Struct({ id: Schema.String, entities: Schema.Array(EntityRef), event_time: Timestamptz }))
  for (const row of spaces) {
    const space: SpaceRef = { orgId: row.org_id, spaceId: row.space_id }
    const raw = yield* sql`SELECT id, entities, event_time FROM memories
      WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND cardinality(source_ids) = 0`.pipe(Effect.flatMap(decodeRaw))
    for (let i = 0; i < raw.length; i += 1000) {
      yield* statements.record(space, raw.slice(i, i + 1000).map((m) => ({ id: m.id, entities: m.entities, at: m.event_time })))
    }
  }
})
