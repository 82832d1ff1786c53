/**
 * Who is calling: the organization every query is scoped to, the user behind
 * the credential, their role, and whether they came with a session or a key.
 */
import { HttpApiMiddleware } from "@effect/platform"
import { Context, Effect, Schema } from "effect"
import { InsufficientRole, InvalidApiKey, KeyExpired, RateLimited, ServiceUnavailable, SessionRequired, Unauthorized } from "./Errors.ts"

export const Role = Schema.Literal("owner", "admin", "member")
export type Role = typeof Role.Type

export type Credential =
  | { readonly _tag: "ApiKey"; readonly keyId: string; readonly env: "live" | "test" }
  | { readonly _tag: "Session"; readonly sessionId: string }
  /** An OAuth access token, accepted on /mcp only (see docs/oauth.md). */
  | { readonly _tag: "OAuth"; readonly grantId: string }

export interface PrincipalShape {
  readonly orgId: string
  readonly userId: string
  readonly role: Role
  readonly credential: Credential
}

export class Principal extends Context.Tag("engram/domain/Principal")<Principal, PrincipalShape>() {}

/** Resolves `Authorization: Bearer <API key or session token>` into a Principal. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("engram/http/Authentication", {
  provides: Principal,
  failure: Schema.Union(Unauthorized, KeyExpired, InvalidApiKey, ServiceUnavailable, RateLimited)
}) {}

/** Control-plane endpoints that an API key may not call. */
export const requireSession = Effect.gen(function*() {
  const principal = yield* Principal
  if (principal.credential._tag !== "Session") {
    return yield* new SessionRequired({ message: "this endpoint needs a signed-in session token, not an API key" })
  }
  return principal
})

export const requireRole = (...roles: ReadonlyArray<Role>) =>
  Effect.gen(function*() {
    const principal = yield* Principal
    if (!roles.includes(principal.role)) {
      return yield* new InsufficientRole({
        message: `this action needs the role ${roles.join(" or ")}; you are ${principal.role}`
      })
    }
    return principal
  })
