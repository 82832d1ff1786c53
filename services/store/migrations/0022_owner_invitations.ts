import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Adding a member is an invitation the user accepts (the members endpoint
 * no longer adds an account directly): an owner's invitation may grant owner.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE invitations DROP CONSTRAINT IF EXISTS invitations_role_check`
  yield* sql`ALTER TABLE invitations ADD CONSTRAINT invitations_role_check CHECK (role IN ('owner', 'admin', 'member'))`
})
