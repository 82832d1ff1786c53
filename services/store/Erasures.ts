/**
 * Erasure requests: what tells the store's erasure pass (Maintenance.ts on
 * the embedded store, ErasurePass on a PostgreSQL server) that text was
 * removed and must be made unreadable on disk. Noted in the transaction that
 * removes the text, so a request is kept exactly when the removal is.
 */
import type { SqlClient } from "@effect/sql"

/** What was erased, for the pass's span and log: never the text itself. */
export type ErasureKind = "memory" | "memory-edit" | "document" | "space" | "memory-model" | "uploaded-file" | "replaced-memories"

/** Notes an erasure; run it in the transaction (or the statement's own) that erased. */
export const noteErasure = (sql: SqlClient.SqlClient, what: ErasureKind) => sql`INSERT INTO store_erasures (what) VALUES (${what})`
