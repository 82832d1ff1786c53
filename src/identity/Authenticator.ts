/**
 * Turns a bearer credential into a Principal. The 401 rules:
 * - no `Authorization` header, not `Bearer <token>`, a token that is neither an
 *   API key nor a session token, a wrong secret for a known key id, a revoked
 *   key, or a key/session of an organization other than `X-Svc-Org-Id`
 *   -> `unauthorized`;
 * - a well-formed API key whose id was never issued -> `invalid_api_key`;
 * - an API key past its expiry -> `key_expired`.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { InvalidApiKey, KeyExpired, Unauthorized } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { Cache, cacheDown } from "../../services/cache/Cache.ts"
import { digestMatches, parseBearer } from "../../services/secrets/Tokens.ts"
import { ApiKeyRepo, type KeyAuthRow } from "../../services/store/ApiKeyRepo.ts"
import { SessionRepo } from "../../services/store/SessionRepo.ts"
import { ApiKeys, KEY_CACHE_TTL, revokedMarker } from "./ApiKeys.ts"

export interface Credentials {
  readonly authorization: string | undefined
  readonly orgId: string | undefined
}

const BEARER = /^Bearer +(\S+) *$/i

export class Authenticator extends Effect.Service<Authenticator>()("engram/identity/Authenticator", {
  dependencies: [ApiKeyRepo.Default, SessionRepo.Default, ApiKeys.Default],
  effect: Effect.gen(function*() {
    const keyRepo = yield* ApiKeyRepo
    const sessions = yield* SessionRepo
    const apiKeys = yield* ApiKeys
    const cache = yield* Cache
    const trusted = new Map<string, { readonly row: KeyAuthRow; readonly until: number }>()
    apiKeys.onRevoke((keyId) => trusted.delete(keyId))

    const keyRow = (keyId: string, now: number) =>
      Effect.gen(function*() {
        const hit = trusted.get(keyId)
        if (hit && hit.until > now) {
          const revoked = yield* cache.get(revokedMarker(keyId)).pipe(Effect.mapError(cacheDown))
          if (Option.isNone(revoked)) return Option.some(hit.row)
          trusted.delete(keyId)
        }
        const row = yield* keyRepo.findForAuth(keyId)
        if (Option.isSome(row) && row.value.revoked_at === null) {
          if (trusted.size > 50_000) trusted.clear()
          trusted.set(keyId, { row: row.value, until: now + Duration.toMillis(KEY_CACHE_TTL) })
        }
        return row
      })

    const verifyKey = (token: string, keyId: string, env: string, orgHeader: string | undefined) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const found = yield* keyRow(keyId, now)
        if (Option.isNone(found)) return yield* new InvalidApiKey({ message: "this API key was never issued" })
        const row = found.value
        if (row.env !== env || !digestMatches(token, row.secret_hash)) {
          return yield* new Unauthorized({ message: "invalid API key" })
        }
        if (row.revoked_at !== null) return yield* new Unauthorized({ message: "this API key was revoked" })
        // A key acts as the member who made it: one who left the organization takes their keys' access with them.
        if (row.created_by !== null && row.role === null) {
          return yield* new Unauthorized({ message: "the member who made this API key is no longer in its organization" })
        }
        if (orgHeader !== undefined && orgHeader !== row.org_id) {
          return yield* new Unauthorized({ message: "this API key belongs to another organization" })
        }
        if (row.expires_at !== null && row.expires_at.getTime() <= now) {
          return yield* new KeyExpired({ message: `this API key expired at ${row.expires_at.toISOString()}` })
        }
        yield* apiKeys.markUsed(row.id, new Date(now))
        return {
          orgId: row.org_id,
          userId: row.created_by ?? "",
          role: row.role ?? "member",
          credential: { _tag: "ApiKey", keyId: row.id, env: row.env }
        } satisfies PrincipalShape
      })

    const verifySession = (token: string, sessionId: string, orgHeader: string | undefined) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const found = yield* sessions.find(sessionId)
        if (Option.isNone(found) || !digestMatches(token, found.value.secret_hash)) {
          return yield* new Unauthorized({ message: "invalid or signed-out session" })
        }
        const session = found.value
        if (session.expires_at.getTime() <= now) {
          return yield* new Unauthorized({ message: "this session has expired; sign in again" })
        }
        if (session.role === null) {
          return yield* new Unauthorized({ message: "you are no longer a member of this organization" })
        }
        if (orgHeader !== undefined && orgHeader !== session.org_id) {
          return yield* new Unauthorized({ message: "this session belongs to another organization" })
        }
        return {
          orgId: session.org_id,
          userId: session.user_id,
          role: session.role,
          credential: { _tag: "Session", sessionId: session.id }
        } satisfies PrincipalShape
      })

    const authenticate = Effect.fn("Authenticator.authenticate")(function*(credentials: Credentials) {
      if (credentials.authorization === undefined || credentials.authorization.trim() === "") {
        return yield* new Unauthorized({ message: "missing Authorization header; send Authorization: Bearer <API key>" })
      }
      const match = BEARER.exec(credentials.authorization)
      if (!match) {
        return yield* new Unauthorized({ message: "malformed Authorization header; expected: Bearer <API key>" })
      }
      const parsed = parseBearer(match[1]!)
      switch (parsed._tag) {
        case "Malformed":
          return yield* new Unauthorized({ message: "the bearer token is not a valid API key or session token" })
        case "ApiKey":
          yield* Effect.annotateCurrentSpan({ key_id: parsed.id })
          return yield* verifyKey(parsed.raw, parsed.id, parsed.env, credentials.orgId)
        case "Session":
          return yield* verifySession(parsed.raw, parsed.id, credentials.orgId)
      }
    })

    return { authenticate }
  })
}) {}
