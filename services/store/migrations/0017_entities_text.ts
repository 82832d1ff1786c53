import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A memory's entities as compact JSON text, `[["name","kind"],...]`, and NULL
 * when it names none, instead of jsonb objects: jsonb spelt out each
 * object's keys for every entity (94 bytes a memory on average in
 * bench:real, against about 45). Nothing queries the column in SQL; which
 * memories name an entity is `entity_keys` (0016).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A conversion needs a subquery, which ALTER ... USING does not take: a function for the rewrite, dropped after.
  yield* sql`CREATE FUNCTION pg_temp.engram_entity_pairs(e jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_array_length(e) = 0 THEN NULL ELSE
      (SELECT json_agg(json_build_array(x->>'name', x->>'kind') ORDER BY o)::text FROM jsonb_array_elements(e) WITH ORDINALITY AS t(x, o))
    END $$`
  yield* sql`ALTER TABLE memories ALTER COLUMN entities DROP DEFAULT`
  yield* sql`ALTER TABLE memories ALTER COLUMN entities DROP NOT NULL`
  yield* sql`ALTER TABLE memories ALTER COLUMN entities TYPE text USING pg_temp.engram_entity_pairs(entities)`
  yield* sql`DROP FUNCTION pg_temp.engram_entity_pairs(jsonb)`
})
