/**
 * Where a string is kept in a database: every column of every table (any
 * schema but PostgreSQL's own) searched as text, case-insensitively, and
 * bytea columns as UTF-8 bytes. For "this secret is stored nowhere".
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"

const Column = Schema.Struct({
  table_schema: Schema.String,
  table_name: Schema.String,
  column_name: Schema.String,
  data_type: Schema.String
})
const Hits = Schema.Array(Schema.Struct({ hits: Schema.Number }))

const quote = (name: string) => `"${name.replaceAll("\"", "\"\"")}"`

/** The test of one column for the needle ($1). */
const holds = (column: typeof Column.Type) =>
  column.data_type === "bytea"
    ? `position(convert_to($1::text, 'UTF8') in ${quote(column.column_name)}) > 0`
    : `strpos(lower(${quote(column.column_name)}::text), lower($1::text)) > 0`

/** `schema.table.column` of every column holding one of `needles`, with the needle; empty when none does. */
export const whereStored = (needles: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = yield* sql`SELECT c.table_schema, c.table_name, c.column_name, c.data_type
      FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
      ORDER BY c.table_schema, c.table_name, c.ordinal_position`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Column)))
    )
    const tables = new Map<string, Array<typeof Column.Type>>()
    for (const column of columns) {
      const table = `${quote(column.table_schema)}.${quote(column.table_name)}`
      tables.set(table, [...(tables.get(table) ?? []), column])
    }
    const found: Array<string> = []
    for (const needle of needles) {
      for (const [table, held] of tables) {
        // One query per table; the columns are named only for a table that holds the needle.
        const [any] = yield* sql.unsafe(`SELECT count(*)::int AS hits FROM ${table} WHERE ${held.map(holds).join(" OR ")}`, [needle]).pipe(
          Effect.flatMap(Schema.decodeUnknown(Hits))
        )
        if ((any?.hits ?? 0) === 0) continue
        for (const column of held) {
          const [one] = yield* sql.unsafe(`SELECT count(*)::int AS hits FROM ${table} WHERE ${holds(column)}`, [needle]).pipe(
            Effect.flatMap(Schema.decodeUnknown(Hits))
          )
          if ((one?.hits ?? 0) > 0) found.push(`${column.table_schema}.${column.table_name}.${column.column_name}: ${needle}`)
        }
      }
    }
    return found
  })

/** How many columns of how many tables the database has: a search of nothing would prove nothing. */
export const columnCount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql`SELECT count(*)::int AS hits FROM information_schema.columns c
    JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
    WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Hits))
  )
  return row?.hits ?? 0
})
