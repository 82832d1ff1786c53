import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { EntityRef } from "../../../src/domain/Memory.ts"
import { decodeRows } from "../Columns.ts"
import { entityKeys } from "../EntityRows.ts"

/**
 * Which memories name an entity is kept on the memories themselves: the
 * canonical keys of a raw memory's entities in `entity_keys`, under a GIN
 * index (posting lists of a few bytes a memory), instead of a table of
 * mentions with two indexes of its own (about 550 bytes a memory, a third of
 * a space's disk in bench:real). The keys of the memories stored so far are
 * worked out from their entities, a page at a time.
 *
 * The index of a space's memories in the order they were stored holds their
 * creation time alone, not the id beside it: the memories of one write share
 * that time, so the index stores it once for all of them (deduplication),
 * about a tenth of its size; orderings by time then id sort within a time.
 */
const PAGE = 2000
const decodePage = decodeRows(Schema.Struct({ id: Schema.String, org_id: Schema.String, space_id: Schema.String, entities: Schema.Array(EntityRef) }))

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memories ADD COLUMN entity_keys text[] NOT NULL DEFAULT '{}'`
  // A memory's source as the edits that make it from its text, when that is shorter (SourceDiff.ts); NULL: source_text is whole.
  yield* sql`ALTER TABLE memories ADD COLUMN source_diff text`
  let after = ""
  for (;;) {
    const page = yield* sql`SELECT id, org_id, space_id, entities FROM memories
      WHERE id > ${after} AND cardinality(source_ids) = 0 AND entities <> '[]'::jsonb
      ORDER BY id LIMIT ${PAGE}`.pipe(Effect.flatMap(decodePage))
    if (page.length === 0) break
    const keyed = page.map((m) => ({ id: m.id, org_id: m.org_id, space_id: m.space_id, keys: entityKeys(m.entities) }))
    yield* sql`UPDATE memories m SET entity_keys = v.keys
      FROM jsonb_to_recordset(${JSON.stringify(keyed)}::jsonb) AS v(id text, org_id text, space_id text, keys text[])
      WHERE m.id = v.id AND m.org_id = v.org_id AND m.space_id = v.space_id`
    after = page[page.length - 1]!.id
  }
  yield* sql`CREATE INDEX memories_entity_keys ON memories USING gin (entity_keys)`
  yield* sql`DROP INDEX memories_space`
  yield* sql`CREATE INDEX memories_space ON memories (org_id, space_id, created_at)`
  yield* sql`DROP TABLE entity_mentions`
})
