import { it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { expect } from "vitest"
import { layerPglite } from "../../services/store/Database.ts"
import { EntitiesColumn, entitiesColumn } from "../../services/store/MemoryRows.ts"
import entitiesText from "../../services/store/migrations/0017_entities_text.ts"

const Rows = Schema.Array(Schema.Struct({ id: Schema.String, entities: EntitiesColumn }))

const named = [
  { name: "Caroline", kind: "person" },
  { name: "Sweden", kind: "place" },
  { name: 'a "quoted", odd\\name\u001e', kind: "thing" }
]

it("entities go to the column as JSON pairs, NULL when there are none, and come back as they went", () => {
  expect(entitiesColumn([])).toBeNull()
  expect(entitiesColumn([{ name: "Caroline", kind: "person" }])).toBe('[["Caroline","person"]]')
  expect(Schema.decodeSync(EntitiesColumn)(entitiesColumn(named))).toEqual(named)
  expect(Schema.decodeSync(EntitiesColumn)(null)).toEqual([])
  expect(() => Schema.decodeSync(EntitiesColumn)('[["only a name"]]')).toThrow()
})

it.scoped("the migration turns jsonb entities into the text column, in order, and empty lists into NULL", () =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The column as migrations before 0017 left it.
    yield* sql`CREATE TABLE memories (id text PRIMARY KEY, entities jsonb NOT NULL DEFAULT '[]')`
    yield* sql`INSERT INTO memories (id, entities) VALUES
      ('m1', ${JSON.stringify(named)}::jsonb), ('m2', '[]'::jsonb), ('m3', ${JSON.stringify([{ kind: "person", name: "Mel" }])}::jsonb)`
    yield* entitiesText
    const rows = yield* sql`SELECT id, entities FROM memories ORDER BY id`.pipe(Effect.flatMap(Schema.decodeUnknown(Rows)))
    expect(rows).toEqual([
      { id: "m1", entities: named },
      { id: "m2", entities: [] },
      { id: "m3", entities: [{ name: "Mel", kind: "person" }] }
    ])
    expect(yield* sql`SELECT count(*)::int AS n FROM memories WHERE entities IS NULL`).toEqual([{ n: 1 }])
    // New rows take the compact form as written.
    yield* sql`INSERT INTO memories (id, entities) VALUES ('m4', ${entitiesColumn([{ name: "Oslo", kind: "place" }])})`
    expect(yield* sql`SELECT entities FROM memories WHERE id = 'm4'`).toEqual([{ entities: '[["Oslo","place"]]' }])
  }).pipe(Effect.provide(layerPglite({ dataDir: "memory://" }))), 60_000)
