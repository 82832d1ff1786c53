/**
 * Deletes the authorization server's spent rows in batches: codes and tokens
 * expired before a cutoff, and grants revoked before it or left with no
 * refresh token valid at it (their codes and tokens go with them). Each batch
 * is one statement that skips rows another node's sweep holds, so every node
 * may sweep at once without waiting on, or deadlocking with, the others.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { decodeRows, Int8 } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const decodeCount = decodeRows(Schema.Struct({ deleted: Int8 }))

export class OAuthSweepRepo extends Effect.Service<OAuthSweepRepo>()("engram/store/OAuthSweepRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const counted = (statement: Effect.Effect<ReadonlyArray<unknown>, SqlError>, span: string) =>
      statement.pipe(
        Effect.flatMap(decodeCount),
        Effect.map((rows) => rows[0]?.deleted ?? 0),
        storeFailure,
        Effect.withSpan(span)
      )

    return {
      /** Authorization codes (used or not) that expired before `cutoff`; at most `limit`. */
      deleteExpiredCodes: (cutoff: Date, limit: number) =>
        counted(
          sql`WITH gone AS (
            DELETE FROM oauth_codes WHERE code_hash IN (
              SELECT code_hash FROM oauth_codes WHERE expires_at < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING 1)
          SELECT count(*) AS deleted FROM gone`,
          "OAuthSweepRepo.deleteExpiredCodes"
        ),

      /** Access and refresh tokens (used, revoked or not) that expired before `cutoff`; at most `limit`. */
      deleteExpiredTokens: (cutoff: Date, limit: number) =>
        counted(
          sql`WITH gone AS (
            DELETE FROM oauth_tokens WHERE token_hash IN (
              SELECT token_hash FROM oauth_tokens WHERE expires_at < ${cutoff} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING 1)
          SELECT count(*) AS deleted FROM gone`,
          "OAuthSweepRepo.deleteExpiredTokens"
        ),

      /**
       * Grants revoked before `cutoff`, and grants made before it that hold no
       * refresh token valid at it (expired, or a code never exchanged), with
       * their codes and tokens; at most `limit`.
       */
      deleteEndedGrants: (cutoff: Date, limit: number) =>
        counted(
          sql`WITH gone AS (
            DELETE FROM oauth_grants WHERE id IN (
              SELECT g.id FROM oauth_grants g
              WHERE g.revoked_at < ${cutoff}
                OR (g.created_at < ${cutoff} AND NOT EXISTS (
                  SELECT 1 FROM oauth_tokens t
                  WHERE t.grant_id = g.id AND t.kind = 'refresh' AND t.expires_at >= ${cutoff}))
              LIMIT ${limit} FOR UPDATE OF g SKIP LOCKED)
            RETURNING 1)
          SELECT count(*) AS deleted FROM gone`,
          "OAuthSweepRepo.deleteEndedGrants"
        )
    }
  })
}) {}
