import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Metering.
 * - `org_billing`: an organization's plan and its current credit period, with
 *   the credits used in it as a counter (kept with every ledger entry, and
 *   read back from the ledger whenever a period starts). Created on first use.
 * - `credit_ledger`: one entry per metered operation. An entry made for a
 *   request carries its request id, unique per organization and operation,
 *   so a retried request is charged once.
 * - `feedback`: what members sent through POST /v1/feedback.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE org_billing (
      org_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
      plan_id text NOT NULL,
      period_anchor timestamptz NOT NULL,
      period_start timestamptz NOT NULL,
      credits_reset_at timestamptz NOT NULL,
      credits_used bigint NOT NULL DEFAULT 0,
      bonus_credits bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE credit_ledger (
      entry_id bigserial PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      op_type text NOT NULL,
      space_id text,
      quantity integer NOT NULL,
      credits bigint NOT NULL,
      request_id text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX credit_ledger_once ON credit_ledger (org_id, op_type, request_id) WHERE request_id IS NOT NULL`
  yield* sql`CREATE INDEX credit_ledger_time ON credit_ledger (org_id, created_at)`
  yield* sql`
    CREATE TABLE feedback (
      feedback_id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      user_id text,
      category text NOT NULL CHECK (category IN ('bug', 'idea', 'other')),
      message text NOT NULL,
      page text,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX feedback_time ON feedback (created_at DESC)`
})
