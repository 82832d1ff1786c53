import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A debit in one statement: the ledger entry (once per organization,
 * operation and request id) and the period's counter, refused when a limit is
 * given and the counter would pass it (the counter row's lock orders
 * concurrent debits). One round trip instead of a transaction's four: the
 * retrieve path pays it on every search. Answers (outcome, credits_used):
 * `charged` with the counter after it, `duplicate`, or `insufficient`.
 * PL/pgSQL is part of every PostgreSQL (and PGlite); no extension is needed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION engram_debit(
      p_org text, p_op text, p_space text, p_quantity integer, p_credits bigint,
      p_request text, p_at timestamptz, p_limit bigint
    ) RETURNS TABLE (outcome text, credits_used bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_entry bigint;
      v_used bigint;
    BEGIN
      INSERT INTO credit_ledger (org_id, op_type, space_id, quantity, credits, request_id, created_at)
        VALUES (p_org, p_op, p_space, p_quantity, p_credits, p_request, p_at)
        ON CONFLICT (org_id, op_type, request_id) WHERE request_id IS NOT NULL DO NOTHING
        RETURNING entry_id INTO v_entry;
      IF v_entry IS NULL THEN
        RETURN QUERY SELECT 'duplicate'::text, NULL::bigint;
        RETURN;
      END IF;
      UPDATE org_billing AS b SET credits_used = b.credits_used + p_credits
        WHERE b.org_id = p_org AND (p_limit IS NULL OR b.credits_used + p_credits <= p_limit + b.bonus_credits)
        RETURNING b.credits_used INTO v_used;
      IF v_used IS NULL THEN
        DELETE FROM credit_ledger WHERE entry_id = v_entry;
        RETURN QUERY SELECT 'insufficient'::text, NULL::bigint;
        RETURN;
      END IF;
      RETURN QUERY SELECT 'charged'::text, v_used;
    END
    $$`)
})
