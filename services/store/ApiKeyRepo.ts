/** API keys: a digest of the secret, never the secret; revoked rows stay for audit but are never listed. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { type ApiKey, KeyEnv } from "../../src/domain/ApiKeys.ts"
import { Role } from "../../src/domain/Principal.ts"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const KeyRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key_prefix: Schema.String,
  env: KeyEnv,
  created_at: Timestamptz,
  expires_at: Schema.NullOr(Timestamptz),
  last_used_at: Schema.NullOr(Timestamptz)
})
type KeyRow = typeof KeyRow.Type

const KeyAuthRow = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  env: KeyEnv,
  secret_hash: Schema.String,
  expires_at: Schema.NullOr(Timestamptz),
  revoked_at: Schema.NullOr(Timestamptz),
  created_by: Schema.NullOr(Schema.String),
  /** The creator's current role in the key's organization; null once they left it. */
  role: Schema.NullOr(Role),
  org_exists: Schema.Boolean
})
export type KeyAuthRow = typeof KeyAuthRow.Type

const decodeKeys = decodeRows(KeyRow)
const decodeAuth = decodeRows(KeyAuthRow)
const decodeIds = decodeRows(Schema.Struct({ id: Schema.String }))

export const toApiKey = (row: KeyRow, now: number): ApiKey => ({
  id: row.id,
  name: row.name,
  key_prefix: row.key_prefix,
  env: row.env,
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at?.toISOString() ?? null,
  status: row.expires_at !== null && row.expires_at.getTime() <= now ? "expired" : "active",
  last_used_at: row.last_used_at?.toISOString() ?? null
})

export class ApiKeyRepo extends Effect.Service<ApiKeyRepo>()("engram/store/ApiKeyRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: (key: {
        id: string
        orgId: string
        createdBy: string
        name: string
        env: KeyEnv
        prefix: string
        hash: string
        now: Date
        expiresAt: Date | null
      }) =>
        sql`INSERT INTO api_keys (id, org_id, created_by, name, env, key_prefix, secret_hash, created_at, expires_at)
          VALUES (${key.id}, ${key.orgId}, ${key.createdBy}, ${key.name}, ${key.env}, ${key.prefix}, ${key.hash},
                  ${key.now}, ${key.expiresAt})
          RETURNING id, name, key_prefix, env, created_at, expires_at, last_used_at`.pipe(
          Effect.flatMap(decodeKeys),
          Effect.map((rows) => rows[0]!),
          storeFailure,
          Effect.withSpan("ApiKeyRepo.create")
        ),

      list: (orgId: string) =>
        sql`SELECT id, name, key_prefix, env, created_at, expires_at, last_used_at FROM api_keys
          WHERE org_id = ${orgId} AND revoked_at IS NULL ORDER BY created_at DESC, id`.pipe(Effect.flatMap(decodeKeys), storeFailure),

      findForAuth: (id: string) =>
        sql`SELECT k.id, k.org_id, k.env, k.secret_hash, k.expires_at, k.revoked_at, k.created_by, m.role,
            (o.id IS NOT NULL) AS org_exists
          FROM api_keys k
          LEFT JOIN organizations o ON o.id = k.org_id
          LEFT JOIN memberships m ON m.org_id = k.org_id AND m.user_id = k.created_by
          WHERE k.id = ${id}`.pipe(Effect.flatMap(decodeAuth), Effect.map((rows) => Option.fromNullable(rows[0])), storeFailure),

      /** True when an active key of that organization was revoked now. */
      revoke: (orgId: string, id: string, now: Date) =>
        sql`UPDATE api_keys SET revoked_at = ${now}
          WHERE id = ${id} AND org_id = ${orgId} AND revoked_at IS NULL RETURNING id`.pipe(
          Effect.flatMap(decodeIds),
          Effect.map((rows) => rows.length > 0),
          storeFailure,
          Effect.withSpan("ApiKeyRepo.revoke")
        ),

      /** Flushes last-used times gathered in memory; never moves a time backwards. */
      touch: (usedAt: ReadonlyArray<readonly [id: string, at: Date]>) =>
        Effect.forEach(usedAt, ([id, at]) =>
          sql`UPDATE api_keys SET last_used_at = ${at}
            WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`, { discard: true }).pipe(
          storeFailure,
          Effect.withSpan("ApiKeyRepo.touch")
        )
    }
  })
}) {}
