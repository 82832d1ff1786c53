import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A memory's state may be `question`: a written turn that only asks, kept and
 * listed but never recalled (src/domain/Memories.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_state_check`
  yield* sql`ALTER TABLE memories ADD CONSTRAINT memories_state_check CHECK (state IN ('active', 'retired', 'question'))`
})
