import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhooks and their deliveries. A delivery row is the outbox: it is written
 * in the transaction of the change it reports, carries the exact bytes to
 * send, and is settled by the space's delivery loop. Deleting a webhook (or
 * its space) deletes its queued deliveries.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhooks (
      org_id text NOT NULL,
      space_id text NOT NULL,
      webhook_id text NOT NULL,
      url text NOT NULL,
      event_types text[] NOT NULL,
      enabled boolean NOT NULL,
      secret_sealed text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (org_id, space_id, webhook_id),
      FOREIGN KEY (org_id, space_id) REFERENCES spaces (org_id, space_id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      delivery_id text PRIMARY KEY,
      org_id text NOT NULL,
      space_id text NOT NULL,
      webhook_id text NOT NULL,
      event_type text NOT NULL,
      operation_id text NOT NULL,
      url text NOT NULL,
      body text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      response_status integer,
      error text,
      next_retry_at timestamptz,
      last_attempt_at timestamptz,
      created_at timestamptz NOT NULL,
      FOREIGN KEY (org_id, space_id, webhook_id) REFERENCES webhooks (org_id, space_id, webhook_id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX webhook_deliveries_list ON webhook_deliveries (org_id, space_id, webhook_id, created_at DESC, delivery_id DESC)`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_retry_at) WHERE status IN ('pending', 'processing')`
})
