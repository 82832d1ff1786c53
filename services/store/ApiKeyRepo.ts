/** API keys: a digest of the secret, never the secret; revoked rows stay for audit but are never listed. */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ApiKey, KeyEnv } from "../../src/domain/ApiKeys.ts"
import type { Role } from "../../src/domain/Principal.ts"
import { iso, isoOrNull, storeFailure } from "./SqlFailure.ts"

interface KeyRow {
  readonly id: string
  readonly name: string
  readonly key_prefix: string
  readonly env: KeyEnv
  readonly created_at: Date
  readonly expires_at: Date | null
  readonly last_used_at: Date | null
}

export interface KeyAuthRow {
  readonly id: string
  readonly org_id: string
  readonly env: KeyEnv
  readonly secret_hash: string
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
  readonly created_by: string | null
  /** The creator's current role in the key's organization; null once they left it. */
  readonly role: Role | null
  readonly org_exists: boolean
}

export const toApiKey = (row: KeyRow, now: number): ApiKey => ({
  id: row.id,
  name: row.name,
  key_prefix: row.key_prefix,
  env: row.env,
  created_at: iso(row.created_at),
  expires_at: isoOrNull(row.expires_at),
  status: row.expires_at !== null && new Date(row.expires_at).getTime() <= now ? "expired" : "active",
  last_used_at: isoOrNull(row.last_used_at)
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
        sql<KeyRow>`INSERT INTO api_keys (id, org_id, created_by, name, env, key_prefix, secret_hash, created_at, expires_at)
          VALUES (${key.id}, ${key.orgId}, ${key.createdBy}, ${key.name}, ${key.env}, ${key.prefix}, ${key.hash},
                  ${key.now}, ${key.expiresAt})
          RETURNING id, name, key_prefix, env, created_at, expires_at, last_used_at`.pipe(
          Effect.map((rows) => rows[0]!),
          storeFailure,
          Effect.withSpan("ApiKeyRepo.create")
        ),

      list: (orgId: string) =>
        sql<KeyRow>`SELECT id, name, key_prefix, env, created_at, expires_at, last_used_at FROM api_keys
          WHERE org_id = ${orgId} AND revoked_at IS NULL ORDER BY created_at DESC, id`.pipe(storeFailure),

      findForAuth: (id: string) =>
        sql<KeyAuthRow>`SELECT k.id, k.org_id, k.env, k.secret_hash, k.expires_at, k.revoked_at, k.created_by, m.role,
            (o.id IS NOT NULL) AS org_exists
          FROM api_keys k
          LEFT JOIN organizations o ON o.id = k.org_id
          LEFT JOIN memberships m ON m.org_id = k.org_id AND m.user_id = k.created_by
          WHERE k.id = ${id}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0])), storeFailure),

      /** True when an active key of that organization was revoked now. */
      revoke: (orgId: string, id: string, now: Date) =>
        sql<{ id: string }>`UPDATE api_keys SET revoked_at = ${now}
          WHERE id = ${id} AND org_id = ${orgId} AND revoked_at IS NULL RETURNING id`.pipe(
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
