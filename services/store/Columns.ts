/**
 * Decoders for what the PostgreSQL drivers hand back: node-postgres (and
 * PGlite's adapter) give timestamps as Dates, int8 and numeric as strings,
 * jsonb parsed and bytea as a Buffer. Every row is decoded with Schema; a row
 * that does not decode is a bug in the query, so it becomes a defect.
 */
import { Effect, Schema } from "effect"
import { yieldToIo } from "../EventLoop.ts"

/** timestamptz: a Date from the driver, or an ISO string from a JSON aggregate. */
export const Timestamptz = Schema.Union(Schema.DateFromSelf, Schema.DateFromString)

/** int8 / numeric / count(*): strings from the driver; int4 columns arrive as numbers. */
export const Int8 = Schema.Union(Schema.Number, Schema.NumberFromString)

export const Bytea = Schema.Uint8ArrayFromSelf

/** Decodes every row of a result with `schema`; a mismatch dies with the parse error. */
export const decodeRows = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(Schema.Array(schema))
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> => Effect.orDie(decode(rows))
}

/**
 * Decodes a large result in chunks, giving pending I/O a turn between them:
 * a space of 100,000 memories must not hold the event loop while it loads.
 */
export const decodeRowsInChunks = <A, I>(schema: Schema.Schema<A, I>, chunk = 2000) => {
  const decode = decodeRows(schema)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<A>> =>
    rows.length <= chunk ? decode(rows) : Effect.gen(function*() {
      const decoded: Array<A> = []
      for (let i = 0; i < rows.length; i += chunk) {
        decoded.push(...yield* decode(rows.slice(i, i + chunk)))
        yield* yieldToIo
      }
      return decoded
    })
}

/** Decodes the single row a statement must return. */
export const decodeRow = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknown(schema)
  return (rows: ReadonlyArray<unknown>): Effect.Effect<A> =>
    rows.length === 0 ? Effect.dieMessage("expected one row, got none") : Effect.orDie(decode(rows[0]))
}
