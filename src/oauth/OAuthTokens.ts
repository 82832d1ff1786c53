/**
 * The token endpoint (authorization code with PKCE S256, rotating refresh
 * tokens: a refresh token used twice revokes its grant), RFC 7009
 * revocation, and the check of an access token on `/mcp`. Tokens are opaque
 * random strings stored as SHA-256 digests, so every node can verify them.
 */
import { Clock, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import {
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_SECONDS,
  oauthError,
  REFRESH_TOKEN_PREFIX,
  REFRESH_TOKEN_SECONDS,
  SCOPE_WRITE,
  type TokenRequest
} from "../domain/OAuth.ts"
import { Unauthorized } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { digest, randomBase62 } from "../../services/secrets/Tokens.ts"
import { type NewToken, OAuthRepo } from "../../services/store/OAuthRepo.ts"

/** What an OAuth access token lets its holder do on `/mcp`. */
export interface McpGrant {
  readonly principal: PrincipalShape
  /** null: every space of the organization. */
  readonly spaces: ReadonlyArray<string> | null
  readonly canWrite: boolean
}

const issuePair = (now: Date) => {
  const access = `${ACCESS_TOKEN_PREFIX}${randomBase62(43)}`
  const refresh = `${REFRESH_TOKEN_PREFIX}${randomBase62(43)}`
  const rows: ReadonlyArray<NewToken> = [
    { hash: digest(access), kind: "access", expiresAt: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000) },
    { hash: digest(refresh), kind: "refresh", expiresAt: new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000) }
  ]
  return { access, refresh, rows }
}

const answer = (pair: { access: string; refresh: string }, scope: string) => ({
  access_token: pair.access,
  token_type: "Bearer",
  expires_in: ACCESS_TOKEN_SECONDS,
  refresh_token: pair.refresh,
  scope
})

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). */
const s256 = (verifier: string) => createHash("sha256").update(verifier, "ascii").digest("base64url")

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/

const required = (value: string | undefined, name: string) =>
  value === undefined || value === "" ? Effect.fail(oauthError("invalid_request", `${name} is required`)) : Effect.succeed(value)

export class OAuthTokens extends Effect.Service<OAuthTokens>()("engram/oauth/OAuthTokens", {
  dependencies: [OAuthRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* OAuthRepo

    const knownClient = (clientId: string) =>
      Effect.flatMap(repo.findClient(clientId), (client) =>
        Option.isNone(client) ? Effect.fail(oauthError("invalid_client", "unknown client_id")) : Effect.void)

    const authorizationCode = Effect.fn("OAuthTokens.authorizationCode")(function*(request: TokenRequest, resource: string) {
      const code = yield* required(request.code, "code")
      const clientId = yield* required(request.client_id, "client_id")
      const redirectUri = yield* required(request.redirect_uri, "redirect_uri")
      const verifier = yield* required(request.code_verifier, "code_verifier")
      yield* knownClient(clientId)
      const now = new Date(yield* Clock.currentTimeMillis)
      const used = yield* repo.useCode(digest(code), now)
      if (used._tag === "Unknown") return yield* oauthError("invalid_grant", "unknown authorization code")
      if (used._tag === "Reused") {
        return yield* oauthError("invalid_grant", "this authorization code was already used; its grant is revoked")
      }
      const row = used.code
      if (row.expires_at.getTime() <= now.getTime()) return yield* oauthError("invalid_grant", "the authorization code expired")
      if (row.grant_revoked_at !== null) return yield* oauthError("invalid_grant", "the grant was revoked")
      if (row.client_id !== clientId) return yield* oauthError("invalid_grant", "the code was issued to another client")
      if (row.redirect_uri !== redirectUri) {
        return yield* oauthError("invalid_grant", "redirect_uri does not match the authorization request")
      }
      if (!VERIFIER.test(verifier) || s256(verifier) !== row.code_challenge) {
        return yield* oauthError("invalid_grant", "code_verifier does not match the code_challenge")
      }
      if (request.resource !== undefined && request.resource !== row.resource) {
        return yield* oauthError("invalid_target", `this server's resource is ${resource}`)
      }
      const pair = issuePair(now)
      yield* repo.issueTokens(row.grant_id, pair.rows, now)
      yield* Effect.annotateCurrentSpan({ grant_id: row.grant_id, org_id: row.org_id })
      return answer(pair, row.scope)
    })

    const refreshToken = Effect.fn("OAuthTokens.refreshToken")(function*(request: TokenRequest) {
      const token = yield* required(request.refresh_token, "refresh_token")
      const clientId = yield* required(request.client_id, "client_id")
      yield* knownClient(clientId)
      const now = new Date(yield* Clock.currentTimeMillis)
      const pair = issuePair(now)
      const rotated = yield* repo.rotateRefresh(digest(token), now, pair.rows)
      if (rotated._tag === "Unknown") return yield* oauthError("invalid_grant", "unknown refresh token")
      if (rotated._tag === "Revoked") {
        return yield* oauthError("invalid_grant", "the grant of this refresh token was revoked; sign in again")
      }
      if (rotated._tag === "Reused") {
        return yield* oauthError("invalid_grant", "this refresh token was already used; the whole grant is revoked")
      }
      const row = rotated.token
      if (row.client_id !== clientId) {
        yield* repo.revokeGrant(row.grant_id, now)
        return yield* oauthError("invalid_grant", "the refresh token was issued to another client")
      }
      if (!rotated.issued) return yield* oauthError("invalid_grant", "the refresh token expired")
      if (request.resource !== undefined && request.resource !== row.resource) {
        yield* repo.revokeGrant(row.grant_id, now)
        return yield* oauthError("invalid_target", `the grant is for ${row.resource}`)
      }
      const requested = (request.scope ?? "").split(" ").filter((s) => s !== "")
      const granted = row.scope.split(" ")
      if (requested.some((s) => !granted.includes(s))) {
        return yield* oauthError("invalid_scope", `the grant covers ${row.scope} only`)
      }
      return answer(pair, row.scope)
    })

    const token = Effect.fn("OAuthTokens.token")(function*(request: TokenRequest, resource: string) {
      switch (request.grant_type) {
        case "authorization_code":
          return yield* authorizationCode(request, resource)
        case "refresh_token":
          return yield* refreshToken(request)
        case undefined:
        case "":
          return yield* oauthError("invalid_request", "grant_type is required")
        default:
          return yield* oauthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
      }
    })

    /** RFC 7009: an access token alone, or a refresh token with its whole grant; unknown tokens are no error. */
    const revoke = Effect.fn("OAuthTokens.revoke")(function*(token: string, clientId: string | undefined) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const hash = digest(token)
      const found = yield* repo.findToken(hash)
      if (Option.isNone(found)) return
      if (clientId !== undefined && clientId !== found.value.client_id) return
      if (found.value.kind === "refresh") yield* repo.revokeGrant(found.value.grant_id, now)
      else yield* repo.revokeToken(hash, now)
    })

    /** The grant behind an access token presented to `/mcp` (bound to `resource`). */
    const verifyAccess = Effect.fn("OAuthTokens.verifyAccess")(function*(raw: string, resource: string, orgHeader: string | undefined) {
      const rejected = (message: string) => new Unauthorized({ message })
      const found = yield* repo.findToken(digest(raw))
      if (Option.isNone(found) || found.value.kind !== "access") return yield* rejected("invalid access token")
      const row = found.value
      const now = yield* Clock.currentTimeMillis
      if (row.revoked_at !== null || row.grant_revoked_at !== null) return yield* rejected("this access token was revoked")
      if (row.expires_at.getTime() <= now) return yield* rejected("this access token expired; refresh it")
      if (row.resource !== resource) return yield* rejected("this access token was issued for another resource")
      if (row.role === null) return yield* rejected("you are no longer a member of this organization")
      if (orgHeader !== undefined && orgHeader !== row.org_id) {
        return yield* rejected("this access token belongs to another organization")
      }
      yield* Effect.annotateCurrentSpan({ grant_id: row.grant_id, org_id: row.org_id })
      return {
        principal: { orgId: row.org_id, userId: row.user_id, role: row.role, credential: { _tag: "OAuth", grantId: row.grant_id } },
        spaces: row.spaces,
        canWrite: row.scope.split(" ").includes(SCOPE_WRITE)
      } satisfies McpGrant
    })

    return { token, revoke, verifyAccess }
  })
}) {}
