import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Memory injection, per organization, space and hour: how many context
 * blocks were rendered into prompts (retrieve with format `block`, the
 * proxy, MCP), their size, and how much of each repeated the start of the
 * block before it in the same scope (what a provider's prompt cache could
 * reuse). All length/4 estimates.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE injection_usage (
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      space_id text NOT NULL,
      bucket timestamptz NOT NULL,
      injections bigint NOT NULL,
      block_tokens bigint NOT NULL,
      cache_prefix_tokens bigint NOT NULL,
      PRIMARY KEY (org_id, space_id, bucket)
    )`
})
