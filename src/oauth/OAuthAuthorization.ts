/**
 * The authorization request (RFC 6749 §4.1 with PKCE S256 and RFC 8707
 * `resource`) and the grant a signed-in user approves. Until the client and
 * its redirect URI are known good, a refusal is shown as a page (`Shown`);
 * after, it goes back to the client as `error=` on the redirect (`Returned`).
 */
import { Clock, Data, Effect, Option } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { type AuthorizationRequest, CODE_PREFIX, CODE_SECONDS, SCOPE_READ, SCOPE_WRITE, SCOPES_SUPPORTED } from "../domain/OAuth.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { digest, randomBase62 } from "../../services/secrets/Tokens.ts"
import { type ClientRow, OAuthRepo } from "../../services/store/OAuthRepo.ts"
import { redirectMatches } from "./OAuthRegistration.ts"

/** A refusal shown on a page: the redirect URI cannot be trusted with it. */
export class Shown extends Data.TaggedError("Shown")<{ readonly message: string }> {}

/** A refusal returned to the client's (validated) redirect URI. */
export class Returned extends Data.TaggedError("Returned")<{ readonly location: string }> {}

export interface ValidRequest {
  readonly client: ClientRow
  readonly clientName: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scope: ReadonlyArray<string>
  readonly resource: string
  readonly state: string | undefined
}

/** The redirect URI with the answer's parameters (and `state`, echoed). */
export const redirectTo = (redirectUri: string, params: Record<string, string>, state: string | undefined) => {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  if (state !== undefined) url.searchParams.set("state", state)
  return url.toString()
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

/** The consent's CSRF token: derived from the session's own secret, so bound to that session. */
export const csrfToken = (sessionToken: string) => createHash("sha256").update(`oauth-consent:${sessionToken}`).digest("base64url")

/** Whether a form sent back the secret it was given (compared in constant time; an empty one never matches). */
export const secretMatches = (expected: string, sent: string) => {
  const a = Buffer.from(expected)
  const b = Buffer.from(sent)
  return a.length > 0 && a.length === b.length && timingSafeEqual(a, b)
}

export const csrfMatches = (sessionToken: string, sent: string) => secretMatches(csrfToken(sessionToken), sent)

export interface Approval {
  readonly write: boolean
  /** null: every space. */
  readonly spaces: ReadonlyArray<string> | null
}

export class OAuthAuthorization extends Effect.Service<OAuthAuthorization>()("engram/oauth/OAuthAuthorization", {
  dependencies: [OAuthRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* OAuthRepo

    /** Checks an authorization request against the client's registration and this server's `resource`. */
    const validate = Effect.fn("OAuthAuthorization.validate")(function*(request: AuthorizationRequest, resource: string) {
      if (request.client_id === undefined || request.client_id === "") return yield* new Shown({ message: "client_id is missing" })
      const found = yield* repo.findClient(request.client_id)
      if (Option.isNone(found)) return yield* new Shown({ message: "this application is not registered (unknown client_id)" })
      const client = found.value
      const redirectUri = request.redirect_uri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined)
      if (redirectUri === undefined || redirectUri === "") return yield* new Shown({ message: "redirect_uri is missing" })
      if (!client.redirect_uris.some((registered) => redirectMatches(registered, redirectUri))) {
        return yield* new Shown({ message: "redirect_uri is not one this application registered" })
      }
      const state = request.state
      const back = (error: string, description: string) =>
        new Returned({ location: redirectTo(redirectUri, { error, error_description: description }, state) })
      if (request.response_type !== "code") return yield* back("unsupported_response_type", "response_type must be code")
      if (request.code_challenge === undefined || request.code_challenge === "") {
        return yield* back("invalid_request", "code_challenge is required (PKCE with S256)")
      }
      if (request.code_challenge_method !== "S256") {
        return yield* back("invalid_request", "code_challenge_method must be S256 (plain is not accepted)")
      }
      if (!CHALLENGE.test(request.code_challenge)) return yield* back("invalid_request", "code_challenge is not an S256 challenge")
      if (request.resource !== undefined && request.resource !== resource) {
        return yield* back("invalid_target", `this server's resource is ${resource}`)
      }
      const asked = (request.scope ?? "").split(" ").filter((s) => s !== "")
      if (asked.some((s) => !SCOPES_SUPPORTED.some((known) => known === s))) {
        return yield* back("invalid_scope", `scope may list ${SCOPES_SUPPORTED.join(" and ")}`)
      }
      const scope = asked.length === 0 || asked.includes(SCOPE_WRITE) ? [SCOPE_READ, SCOPE_WRITE] : [SCOPE_READ]
      return {
        client,
        clientName: client.client_name ?? "An unnamed application",
        redirectUri,
        codeChallenge: request.code_challenge,
        scope,
        resource,
        state
      } satisfies ValidRequest
    })

    /** Records the user's approval as a grant and answers the redirect carrying its one-minute code. */
    const approve = Effect.fn("OAuthAuthorization.approve")(function*(principal: PrincipalShape, request: ValidRequest, approval: Approval) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const code = `${CODE_PREFIX}${randomBase62(43)}`
      const grantId = `grt_${randomBase62(16)}`
      const scope = approval.write && request.scope.includes(SCOPE_WRITE) ? `${SCOPE_READ} ${SCOPE_WRITE}` : SCOPE_READ
      yield* repo.createGrant(
        {
          id: grantId,
          clientId: request.client.id,
          orgId: principal.orgId,
          userId: principal.userId,
          scope,
          spaces: approval.spaces,
          resource: request.resource,
          now
        },
        { hash: digest(code), redirectUri: request.redirectUri, codeChallenge: request.codeChallenge, expiresAt: new Date(now.getTime() + CODE_SECONDS * 1000) }
      )
      yield* Effect.annotateCurrentSpan({ grant_id: grantId, org_id: principal.orgId })
      return redirectTo(request.redirectUri, { code }, request.state)
    })

    const deny = (request: ValidRequest) =>
      redirectTo(request.redirectUri, { error: "access_denied", error_description: "the user denied access" }, request.state)

    return { validate, approve, deny }
  })
}) {}
