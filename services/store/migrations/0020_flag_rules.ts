import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A rule may `flag` what it finds (store it, marked in its metadata) beside
 * redacting or blocking it: the `prompt_injection` detector's usual action.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE space_rules DROP CONSTRAINT IF EXISTS space_rules_action_check`
  yield* sql`ALTER TABLE space_rules ADD CONSTRAINT space_rules_action_check CHECK (action IN ('redact', 'block', 'flag'))`
})
