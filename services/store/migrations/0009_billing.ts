import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Billing with a payment processor.
 * - `org_billing` gains the processor's customer and subscription, whether
 *   the subscription ends with its period, and a smaller plan waiting for
 *   the period's end (a downgrade), and the start of the processor's own
 *   current period (a price change in a later one is a renewal).
 * - `billing_checkouts`: the checkout sessions opened for an organization,
 *   so a repeat checkout for the same plan returns the same session.
 * - `billing_events`: the processor's event ids already applied; a
 *   redelivered event changes nothing.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE org_billing ADD COLUMN customer_id text`
  yield* sql`ALTER TABLE org_billing ADD COLUMN subscription_id text`
  yield* sql`ALTER TABLE org_billing ADD COLUMN cancel_at_period_end boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE org_billing ADD COLUMN pending_plan_id text`
  yield* sql`ALTER TABLE org_billing ADD COLUMN processor_period_start timestamptz`
  yield* sql`CREATE UNIQUE INDEX org_billing_subscription ON org_billing (subscription_id) WHERE subscription_id IS NOT NULL`
  yield* sql`
    CREATE TABLE billing_checkouts (
      session_id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      plan_id text NOT NULL,
      url text NOT NULL,
      status text NOT NULL CHECK (status IN ('open', 'complete', 'expired')),
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX billing_checkouts_org ON billing_checkouts (org_id, status)`
  yield* sql`
    CREATE TABLE billing_events (
      event_id text PRIMARY KEY,
      event_type text NOT NULL,
      org_id text,
      received_at timestamptz NOT NULL
    )`
})
