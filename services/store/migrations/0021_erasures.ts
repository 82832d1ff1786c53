import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Erasures waiting for the store's erasure pass: each delete of a memory,
 * document, space, memory model or uploaded file, and each edit of a
 * memory's text, notes one in its own transaction, so that a pass owed
 * before a crash is still owed after it (docs/operations.md, Erasure).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE store_erasures (
    id bigserial PRIMARY KEY,
    what text NOT NULL,
    requested_at timestamptz NOT NULL DEFAULT now()
  )`
})
