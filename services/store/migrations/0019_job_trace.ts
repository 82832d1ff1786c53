import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A queued job keeps the trace of the request that queued it (W3C ids, null
 * when nothing traced it): the drain step that stores its items links its
 * span to it, so a trace viewer shows the write and its storing as one story.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ingest_jobs ADD COLUMN trace_id text`
  yield* sql`ALTER TABLE ingest_jobs ADD COLUMN span_id text`
})
