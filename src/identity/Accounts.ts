/** Sign-up, sign-in, sign-out and organization membership. */
import { Clock, Duration, Effect, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { Conflict, InsufficientRole, NotFound, SessionRequired, Unauthorized } from "../domain/Errors.ts"
import type { PrincipalShape, Role } from "../domain/Principal.ts"
import { AccountRepo } from "../../services/store/AccountRepo.ts"
import { SessionRepo } from "../../services/store/SessionRepo.ts"
import { Cache } from "../../services/cache/Cache.ts"
import { revokedMarker, REVOKED_MARKER_TTL } from "./ApiKeys.ts"
import { DUMMY_HASH, hashPassword, verifyPassword } from "../../services/secrets/Passwords.ts"
import { issueSessionToken, randomBase62 } from "../../services/secrets/Tokens.ts"
import { newId } from "./Ids.ts"

export class Accounts extends Effect.Service<Accounts>()("engram/identity/Accounts", {
  dependencies: [AccountRepo.Default, SessionRepo.Default],
  effect: Effect.gen(function*() {
    const accounts = yield* AccountRepo
    const sessions = yield* SessionRepo
    const cache = yield* Cache
    const config = yield* AppConfig

    const openSession = Effect.fn("Accounts.openSession")(function*(userId: string, orgId: string, role: Role) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const expiresAt = new Date(now.getTime() + Duration.toMillis(config.sessionTtl))
      const token = issueSessionToken()
      yield* sessions.create({ id: token.id, hash: token.hash, userId, orgId, now, expiresAt })
      return { user_id: userId, org_id: orgId, role, session_token: token.raw, expires_at: expiresAt.toISOString() }
    })

    const signup = Effect.fn("Accounts.signup")(function*(input: { email: string; password: string; orgName: string }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const userId = newId("usr")
      const orgId = newId("org")
      const passwordHash = yield* hashPassword(input.password)
      yield* accounts.signup({ userId, email: input.email, passwordHash, orgId, orgName: input.orgName.trim(), now })
      yield* Effect.annotateCurrentSpan({ org_id: orgId, user_id: userId })
      return yield* openSession(userId, orgId, "owner")
    })

    const login = Effect.fn("Accounts.login")(function*(input: { email: string; password: string; orgId?: string | undefined }) {
      const rejected = new Unauthorized({ message: "invalid email or password" })
      const user = yield* accounts.findUserByEmail(input.email)
      const ok = yield* verifyPassword(input.password, Option.match(user, { onNone: () => DUMMY_HASH, onSome: (u) => u.password_hash }))
      if (Option.isNone(user) || !ok) return yield* rejected
      const membership = yield* accounts.membership(user.value.id, input.orgId)
      if (Option.isNone(membership)) {
        return yield* new Unauthorized({ message: "you are not a member of that organization" })
      }
      return yield* openSession(user.value.id, membership.value.org_id, membership.value.role)
    })

    /**
     * Operator bootstrap: a new organization owned by the user with this email
     * (created when new; an existing user's password must match when given).
     */
    const bootstrap = Effect.fn("Accounts.bootstrap")(function*(input: { orgName: string; email: string; password?: string | undefined }) {
      const now = new Date(yield* Clock.currentTimeMillis)
      const orgId = newId("org")
      const existing = yield* accounts.findUserByEmail(input.email)
      let userId: string
      if (Option.isSome(existing)) {
        if (input.password !== undefined && !(yield* verifyPassword(input.password, existing.value.password_hash))) {
          return yield* new Unauthorized({ message: `an account with ${input.email} exists and the password does not match` })
        }
        userId = existing.value.id
        yield* accounts.createOrg({ orgId, orgName: input.orgName, ownerId: userId, now })
      } else {
        userId = newId("usr")
        const passwordHash = yield* hashPassword(input.password ?? randomBase62(32))
        yield* accounts.signup({ userId, email: input.email, passwordHash, orgId, orgName: input.orgName, now })
      }
      return yield* openSession(userId, orgId, "owner")
    })

    /** The principal the operator CLI acts as: the organization's first owner. */
    const operator = Effect.fn("Accounts.operator")(function*(orgId: string) {
      const owner = yield* accounts.firstOwner(orgId)
      if (Option.isNone(owner)) return yield* new NotFound({ message: `no organization ${orgId}` })
      return { orgId, userId: owner.value, role: "owner", credential: { _tag: "Session", sessionId: "operator" } } satisfies PrincipalShape
    })

    const logout = (principal: PrincipalShape) =>
      principal.credential._tag === "Session" ? sessions.delete(principal.credential.sessionId) : Effect.void

    const organization = Effect.fn("Accounts.organization")(function*(principal: PrincipalShape) {
      const org = yield* accounts.organization(principal.orgId)
      if (Option.isNone(org)) return yield* new Unauthorized({ message: "your organization no longer exists" })
      const email = yield* accounts.userEmail(principal.userId)
      return {
        org_id: org.value.id,
        name: org.value.name,
        created_at: org.value.created_at,
        role: principal.role,
        user_id: principal.userId,
        email
      }
    })

    /** The organizations the signed-in user belongs to, marking the one this session acts in. */
    const organizations = Effect.fn("Accounts.organizations")(function*(principal: PrincipalShape) {
      const rows = yield* accounts.organizationsOf(principal.userId)
      return rows.map((row) => ({
        org_id: row.org_id,
        name: row.name,
        role: row.role,
        created_at: row.created_at.toISOString(),
        joined_at: row.joined_at.toISOString(),
        current: row.org_id === principal.orgId
      }))
    })

    /**
     * The signed-in user acting in another of their organizations, with their
     * role there (a choice made on a page, checked here; the credential stays
     * the same). NotFound when they are not a member of it.
     */
    const actingIn = Effect.fn("Accounts.actingIn")(function*(principal: PrincipalShape, orgId: string) {
      const membership = yield* accounts.membership(principal.userId, orgId)
      if (Option.isNone(membership)) {
        return yield* new NotFound({ message: "you are not a member of that organization" })
      }
      return { ...principal, orgId: membership.value.org_id, role: membership.value.role } satisfies PrincipalShape
    })

    /**
     * Moves the calling session to another of the user's organizations: a new
     * token acting there that keeps the old one's expiry (a switch never
     * extends a sign-in); the old token stops working.
     */
    const switchOrganization = Effect.fn("Accounts.switchOrganization")(function*(principal: PrincipalShape, orgId: string) {
      if (principal.credential._tag !== "Session") {
        return yield* new SessionRequired({ message: "this endpoint needs a signed-in session token, not an API key" })
      }
      const membership = yield* accounts.membership(principal.userId, orgId)
      if (Option.isNone(membership)) {
        return yield* new NotFound({ message: "you are not a member of that organization" })
      }
      const now = new Date(yield* Clock.currentTimeMillis)
      const token = issueSessionToken()
      const replaced = yield* sessions.replace({
        oldId: principal.credential.sessionId,
        id: token.id,
        hash: token.hash,
        userId: principal.userId,
        orgId: membership.value.org_id,
        now
      })
      if (Option.isNone(replaced)) return yield* new Unauthorized({ message: "invalid or signed-out session" })
      yield* Effect.annotateCurrentSpan({ org_id: membership.value.org_id, user_id: principal.userId })
      return {
        user_id: principal.userId,
        org_id: membership.value.org_id,
        role: membership.value.role,
        session_token: token.raw,
        expires_at: replaced.value.toISOString()
      }
    })

    const removeMember = Effect.fn("Accounts.removeMember")(function*(principal: PrincipalShape, userId: string) {
      const now = new Date(yield* Clock.currentTimeMillis)
      // Leaving on one's own is allowed whatever one's role; removing an owner takes an owner.
      const mayRemoveOwner = principal.userId === userId || principal.role === "owner"
      const { outcome, revokedKeys } = yield* accounts.removeMember(principal.orgId, userId, mayRemoveOwner, now)
      if (outcome === "missing") return yield* new NotFound({ message: "no such member" })
      if (outcome === "owner_only") return yield* new InsufficientRole({ message: "only an owner can remove an owner" })
      if (outcome === "last_owner") {
        return yield* new Conflict({ message: "an organization keeps at least one owner" })
      }
      // Every node drops the revoked keys from its cache of trusted keys at their next use (as a revocation does).
      yield* Effect.forEach(revokedKeys, (keyId) => cache.set(revokedMarker(keyId), "1", REVOKED_MARKER_TTL), { discard: true }).pipe(
        Effect.catchAll((error) => Effect.logWarning(`the removed member's keys are revoked; other nodes see it within a minute: ${error.message}`))
      )
    })

    return {
      signup,
      login,
      logout,
      organization,
      organizations,
      actingIn,
      switchOrganization,
      members: (principal: PrincipalShape) => accounts.listMembers(principal.orgId),
      removeMember,
      openSession,
      bootstrap,
      operator
    }
  })
}) {}
