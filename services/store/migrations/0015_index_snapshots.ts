import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a snapshot of a space's index is checked against: a version of each
 * space's memories, raised by every statement that inserts, changes or
 * deletes any of them (a trigger, so no writer can forget it). A snapshot
 * taken at version V is trusted only while the space is still at V.
 * `space_snapshots` holds the snapshots where nodes share the store (the
 * server profile); the embedded profile keeps them as files.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE space_versions (
      org_id text NOT NULL,
      space_id text NOT NULL,
      version bigint NOT NULL,
      PRIMARY KEY (org_id, space_id)
    )`
  yield* sql`
    CREATE FUNCTION engram_bump_space_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        INSERT INTO space_versions (org_id, space_id, version)
        SELECT DISTINCT org_id, space_id, 1 FROM old_rows
        ON CONFLICT (org_id, space_id) DO UPDATE SET version = space_versions.version + 1;
      ELSE
        INSERT INTO space_versions (org_id, space_id, version)
        SELECT DISTINCT org_id, space_id, 1 FROM new_rows
        ON CONFLICT (org_id, space_id) DO UPDATE SET version = space_versions.version + 1;
      END IF;
      RETURN NULL;
    END
    $$`
  yield* sql`CREATE TRIGGER memories_version_insert AFTER INSERT ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_bump_space_version()`
  yield* sql`CREATE TRIGGER memories_version_update AFTER UPDATE ON memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_bump_space_version()`
  yield* sql`CREATE TRIGGER memories_version_delete AFTER DELETE ON memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_bump_space_version()`
  yield* sql`
    CREATE TABLE space_snapshots (
      org_id text NOT NULL,
      space_id text NOT NULL,
      data bytea NOT NULL,
      written_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  // Already compressed: storing it as it comes spares the store a compression attempt that cannot gain.
  yield* sql`ALTER TABLE space_snapshots ALTER COLUMN data SET STORAGE EXTERNAL`
})
