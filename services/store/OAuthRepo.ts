/**
 * The MCP authorization server's rows: clients, grants, single-use codes and
 * tokens (digests only). A refresh token is used once (`used_at`); its grant
 * is revoked as a whole (`revoked_at` on the grant and on every token).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Role } from "../../src/domain/Principal.ts"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const ClientRow = Schema.Struct({
  id: Schema.String,
  client_name: Schema.NullOr(Schema.String),
  redirect_uris: Schema.Array(Schema.String),
  created_at: Timestamptz
})
export type ClientRow = typeof ClientRow.Type

const grantFields = {
  grant_id: Schema.String,
  client_id: Schema.String,
  org_id: Schema.String,
  user_id: Schema.String,
  scope: Schema.String,
  /** null: every space of the organization. */
  spaces: Schema.NullOr(Schema.Array(Schema.String)),
  resource: Schema.String,
  grant_revoked_at: Schema.NullOr(Timestamptz)
}

const CodeRow = Schema.Struct({
  ...grantFields,
  redirect_uri: Schema.String,
  code_challenge: Schema.String,
  expires_at: Timestamptz
})
export type CodeRow = typeof CodeRow.Type

const TokenRow = Schema.Struct({
  ...grantFields,
  kind: Schema.Literal("access", "refresh"),
  expires_at: Timestamptz,
  used_at: Schema.NullOr(Timestamptz),
  revoked_at: Schema.NullOr(Timestamptz),
  /** The user's current role in the grant's organization; null once they left it. */
  role: Schema.NullOr(Role)
})
export type TokenRow = typeof TokenRow.Type

const decodeClients = decodeRows(ClientRow)
const decodeCodes = decodeRows(CodeRow)
const decodeTokens = decodeRows(TokenRow)
const decodeGrantIds = decodeRows(Schema.Struct({ grant_id: Schema.String }))

/** A grant still in force, with its client and the user who approved it (the console's "connected clients"). */
const ConnectedRow = Schema.Struct({
  grant_id: Schema.String,
  client_id: Schema.String,
  client_name: Schema.NullOr(Schema.String),
  user_id: Schema.String,
  email: Schema.String,
  scope: Schema.String,
  spaces: Schema.NullOr(Schema.Array(Schema.String)),
  created_at: Timestamptz,
  last_used_at: Schema.NullOr(Timestamptz)
})
export type ConnectedRow = typeof ConnectedRow.Type
const decodeConnected = decodeRows(ConnectedRow)

export interface NewGrant {
  readonly id: string
  readonly clientId: string
  readonly orgId: string
  readonly userId: string
  readonly scope: string
  readonly spaces: ReadonlyArray<string> | null
  readonly resource: string
  readonly now: Date
}

export interface NewCode {
  readonly hash: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly expiresAt: Date
}

export interface NewToken {
  readonly hash: string
  readonly kind: "access" | "refresh"
  readonly expiresAt: Date
}

export class OAuthRepo extends Effect.Service<OAuthRepo>()("engram/store/OAuthRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const grantColumns = sql`g.id AS grant_id, g.client_id, g.org_id, g.user_id, g.scope, g.spaces, g.resource,
      g.revoked_at AS grant_revoked_at`

    const insertTokens = (grantId: string, tokens: ReadonlyArray<NewToken>, now: Date) =>
      Effect.forEach(tokens, (token) =>
        sql`INSERT INTO oauth_tokens (token_hash, grant_id, kind, created_at, expires_at)
          VALUES (${token.hash}, ${grantId}, ${token.kind}, ${now}, ${token.expiresAt})`, { discard: true })

    const findToken = (hash: string) =>
      sql`SELECT ${grantColumns}, t.kind, t.expires_at, t.used_at, t.revoked_at, m.role
        FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
        LEFT JOIN memberships m ON m.org_id = g.org_id AND m.user_id = g.user_id
        WHERE t.token_hash = ${hash}`.pipe(Effect.flatMap(decodeTokens), Effect.map((rows) => Option.fromNullable(rows[0])))

    const revokeGrant = (grantId: string, now: Date) =>
      Effect.gen(function*() {
        yield* sql`UPDATE oauth_grants SET revoked_at = ${now} WHERE id = ${grantId} AND revoked_at IS NULL`
        yield* sql`UPDATE oauth_tokens SET revoked_at = ${now} WHERE grant_id = ${grantId} AND revoked_at IS NULL`
      })

    return {
      createClient: (row: { id: string; clientName: string | null; redirectUris: ReadonlyArray<string>; now: Date }) =>
        sql`INSERT INTO oauth_clients (id, client_name, redirect_uris, created_at)
          VALUES (${row.id}, ${row.clientName}, ${JSON.stringify(row.redirectUris)}::jsonb, ${row.now})`.pipe(
          Effect.asVoid,
          storeFailure
        ),

      findClient: (id: string) =>
        sql`SELECT id, client_name, redirect_uris, created_at FROM oauth_clients WHERE id = ${id}`.pipe(
          Effect.flatMap(decodeClients),
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        ),

      /** A grant the user approved, with its authorization code, in one transaction. */
      createGrant: (grant: NewGrant, code: NewCode) =>
        Effect.gen(function*() {
          const spaces = grant.spaces === null ? null : JSON.stringify(grant.spaces)
          yield* sql`INSERT INTO oauth_grants (id, client_id, org_id, user_id, scope, spaces, resource, created_at)
            VALUES (${grant.id}, ${grant.clientId}, ${grant.orgId}, ${grant.userId}, ${grant.scope},
              ${spaces}::jsonb, ${grant.resource}, ${grant.now})`
          yield* sql`INSERT INTO oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, expires_at)
            VALUES (${code.hash}, ${grant.id}, ${code.redirectUri}, ${code.codeChallenge}, ${code.expiresAt})`
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("OAuthRepo.createGrant")),

      /**
       * Uses a code: `fresh` with its grant the first time; `reused` (after
       * revoking the grant it issued) when it was already used; none when unknown.
       */
      useCode: (hash: string, now: Date) =>
        Effect.gen(function*() {
          const used = yield* sql`UPDATE oauth_codes c SET used_at = ${now} FROM oauth_grants g
            WHERE c.code_hash = ${hash} AND c.used_at IS NULL AND g.id = c.grant_id
            RETURNING ${grantColumns}, c.redirect_uri, c.code_challenge, c.expires_at`.pipe(Effect.flatMap(decodeCodes))
          const fresh = used[0]
          if (fresh !== undefined) return { _tag: "Fresh", code: fresh } as const
          const earlier = yield* sql`SELECT grant_id FROM oauth_codes WHERE code_hash = ${hash}`.pipe(Effect.flatMap(decodeGrantIds))
          const reused = earlier[0]
          if (reused === undefined) return { _tag: "Unknown" } as const
          yield* revokeGrant(reused.grant_id, now)
          return { _tag: "Reused" } as const
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("OAuthRepo.useCode")),

      issueTokens: (grantId: string, tokens: ReadonlyArray<NewToken>, now: Date) =>
        insertTokens(grantId, tokens, now).pipe(sql.withTransaction, storeFailure, Effect.withSpan("OAuthRepo.issueTokens")),

      findToken: (hash: string) => findToken(hash).pipe(storeFailure),

      /**
       * Rotates a refresh token: marks it used and stores its successors, in one
       * transaction. `Revoked` when its grant was revoked (whether this token was
       * used or not: the grant's revocation is the reason it stops); `Reused`
       * (after revoking the whole grant) when it had been used before;
       * `Unknown` when no such refresh token exists.
       */
      rotateRefresh: (hash: string, now: Date, successors: ReadonlyArray<NewToken>) =>
        Effect.gen(function*() {
          const found = yield* findToken(hash)
          if (Option.isNone(found) || found.value.kind !== "refresh") return { _tag: "Unknown" } as const
          const row = found.value
          if (row.grant_revoked_at !== null) return { _tag: "Revoked" } as const
          const marked = yield* sql`UPDATE oauth_tokens SET used_at = ${now}
            WHERE token_hash = ${hash} AND kind = 'refresh' AND used_at IS NULL
            RETURNING grant_id`.pipe(Effect.flatMap(decodeGrantIds))
          if (marked.length === 0) {
            yield* revokeGrant(row.grant_id, now)
            return { _tag: "Reused" } as const
          }
          const usable = row.revoked_at === null && row.expires_at.getTime() > now.getTime()
          if (usable) yield* insertTokens(row.grant_id, successors, now)
          return { _tag: "Rotated", token: row, issued: usable } as const
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("OAuthRepo.rotateRefresh")),

      revokeToken: (hash: string, now: Date) =>
        sql`UPDATE oauth_tokens SET revoked_at = ${now} WHERE token_hash = ${hash} AND revoked_at IS NULL`.pipe(
          Effect.asVoid,
          storeFailure
        ),

      /**
       * The organization's grants in force (not revoked, with a refresh token
       * that can still be used), newest first; only `userId`'s when given.
       * `last_used_at` is when a token of the grant was last issued.
       */
      connected: (orgId: string, userId: string | null) =>
        sql`SELECT g.id AS grant_id, g.client_id, c.client_name, g.user_id, u.email, g.scope, g.spaces, g.created_at,
            (SELECT max(t.created_at) FROM oauth_tokens t WHERE t.grant_id = g.id) AS last_used_at
          FROM oauth_grants g
          JOIN oauth_clients c ON c.id = g.client_id
          JOIN users u ON u.id = g.user_id
          WHERE g.org_id = ${orgId} AND g.revoked_at IS NULL
            ${userId === null ? sql`` : sql`AND g.user_id = ${userId}`}
            AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.kind = 'refresh'
              AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > now())
          ORDER BY g.created_at DESC, g.id`.pipe(Effect.flatMap(decodeConnected), storeFailure),

      /** Revokes a grant of the organization (only `userId`'s when given); answers whether one was in force. */
      revokeInOrg: (orgId: string, grantId: string, userId: string | null, now: Date) =>
        Effect.gen(function*() {
          const found = yield* sql`SELECT id AS grant_id FROM oauth_grants
            WHERE id = ${grantId} AND org_id = ${orgId} AND revoked_at IS NULL
              ${userId === null ? sql`` : sql`AND user_id = ${userId}`}`.pipe(Effect.flatMap(decodeGrantIds))
          if (found.length === 0) return false
          yield* revokeGrant(grantId, now)
          return true
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("OAuthRepo.revokeInOrg")),

      revokeGrant: (grantId: string, now: Date) =>
        revokeGrant(grantId, now).pipe(sql.withTransaction, storeFailure, Effect.withSpan("OAuthRepo.revokeGrant"))
    }
  })
}) {}
