/** Organizations, users and memberships. Every read names the organization it is scoped to. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Conflict } from "../../src/domain/Errors.ts"
import { Role } from "../../src/domain/Principal.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { isUniqueViolation, storeFailure } from "./SqlFailure.ts"

const MemberRow = Schema.Struct({ user_id: Schema.String, email: Schema.String, role: Role, created_at: Timestamptz })

const toMember = (row: typeof MemberRow.Type) => ({
  user_id: row.user_id,
  email: row.email,
  role: row.role,
  created_at: row.created_at.toISOString()
})

const decodeMembers = decodeRows(MemberRow)
const decodeUsers = decodeRows(Schema.Struct({ id: Schema.String, password_hash: Schema.String }))
const decodeMemberships = decodeRows(Schema.Struct({ org_id: Schema.String, role: Role }))
const decodeOrganizations = decodeRows(Schema.Struct({ id: Schema.String, name: Schema.String, created_at: Timestamptz }))
const decodeUserIds = decodeRows(Schema.Struct({ user_id: Schema.String }))
const decodeEmails = decodeRows(Schema.Struct({ email: Schema.String }))
const decodeRoles = decodeRows(Schema.Struct({ role: Role }))
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodeKeyIds = decodeRows(Schema.Struct({ id: Schema.String }))
const decodeUserOrganizations = decodeRows(Schema.Struct({
  org_id: Schema.String,
  name: Schema.String,
  role: Role,
  created_at: Timestamptz,
  joined_at: Timestamptz
}))

export class AccountRepo extends Effect.Service<AccountRepo>()("engram/store/AccountRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertUser = (user: { id: string; email: string; passwordHash: string; now: Date }) =>
      sql`INSERT INTO users (id, email, password_hash, created_at)
          VALUES (${user.id}, ${user.email}, ${user.passwordHash}, ${user.now})`.pipe(
        Effect.catchIf(isUniqueViolation, () => new Conflict({ message: "an account with that email already exists" }))
      )

    const insertOrgWithOwner = (org: { id: string; name: string; ownerId: string; now: Date }) =>
      Effect.zipRight(
        sql`INSERT INTO organizations (id, name, created_at) VALUES (${org.id}, ${org.name}, ${org.now})`,
        sql`INSERT INTO memberships (org_id, user_id, role, created_at) VALUES (${org.id}, ${org.ownerId}, 'owner', ${org.now})`
      )

    const findUserByEmail = (email: string) =>
      sql`SELECT id, password_hash FROM users WHERE email = ${email}`.pipe(
        Effect.flatMap(decodeUsers),
        Effect.map((rows) => Option.fromNullable(rows[0])),
        storeFailure
      )

    return {
      /** A new user with a new organization they own, in one transaction. */
      signup: (input: { userId: string; email: string; passwordHash: string; orgId: string; orgName: string; now: Date }) =>
        sql.withTransaction(
          insertUser({ id: input.userId, ...input }).pipe(
            Effect.zipRight(insertOrgWithOwner({ id: input.orgId, name: input.orgName, ownerId: input.userId, now: input.now }))
          )
        ).pipe(storeFailure, Effect.withSpan("AccountRepo.signup")),

      /** A new organization owned by an existing user (operator bootstrap). */
      createOrg: (input: { orgId: string; orgName: string; ownerId: string; now: Date }) =>
        insertOrgWithOwner({ id: input.orgId, name: input.orgName, ownerId: input.ownerId, now: input.now }).pipe(
          sql.withTransaction,
          storeFailure,
          Effect.withSpan("AccountRepo.createOrg")
        ),

      createUser: (input: { id: string; email: string; passwordHash: string; now: Date }) =>
        insertUser(input).pipe(storeFailure),

      findUserByEmail,

      /** The user's role in `orgId`, or in their oldest organization when none is named. */
      membership: (userId: string, orgId: string | undefined) =>
        (orgId === undefined
          ? sql`SELECT org_id, role FROM memberships WHERE user_id = ${userId}
              ORDER BY created_at, org_id LIMIT 1`
          : sql`SELECT org_id, role FROM memberships
              WHERE user_id = ${userId} AND org_id = ${orgId}`).pipe(
            Effect.flatMap(decodeMemberships),
            Effect.map((rows) => Option.fromNullable(rows[0])),
            storeFailure
          ),

      /** Every organization the user belongs to, oldest membership first (the one login picks). */
      organizationsOf: (userId: string) =>
        sql`SELECT m.org_id, o.name, m.role, o.created_at, m.created_at AS joined_at
          FROM memberships m JOIN organizations o ON o.id = m.org_id
          WHERE m.user_id = ${userId} ORDER BY m.created_at, m.org_id`.pipe(
          Effect.flatMap(decodeUserOrganizations),
          storeFailure
        ),

      organization: (orgId: string) =>
        sql`SELECT id, name, created_at FROM organizations WHERE id = ${orgId}`
          .pipe(
            Effect.flatMap(decodeOrganizations),
            Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r) => ({ ...r, created_at: r.created_at.toISOString() })))),
            storeFailure
          ),

      /** The organization's first owner, who acts for the operator CLI. */
      firstOwner: (orgId: string) =>
        sql`SELECT user_id FROM memberships WHERE org_id = ${orgId} AND role = 'owner'
          ORDER BY created_at, user_id LIMIT 1`.pipe(
          Effect.flatMap(decodeUserIds),
          Effect.map((rows) => Option.fromNullable(rows[0]?.user_id)),
          storeFailure
        ),

      userEmail: (userId: string) =>
        sql`SELECT email FROM users WHERE id = ${userId}`.pipe(
          Effect.flatMap(decodeEmails),
          Effect.map((rows) => rows[0]?.email ?? ""),
          storeFailure
        ),

      listMembers: (orgId: string) =>
        sql`SELECT m.user_id, u.email, m.role, m.created_at FROM memberships m
          JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId} ORDER BY m.created_at, m.user_id`.pipe(
          Effect.flatMap(decodeMembers),
          Effect.map((rows) => rows.map(toMember)),
          storeFailure
        ),

      addMember: (input: { orgId: string; userId: string; role: Role; now: Date }) =>
        sql`WITH added AS (
            INSERT INTO memberships (org_id, user_id, role, created_at)
            VALUES (${input.orgId}, ${input.userId}, ${input.role}, ${input.now}) RETURNING *)
          SELECT a.user_id, u.email, a.role, a.created_at FROM added a JOIN users u ON u.id = a.user_id`.pipe(
          Effect.flatMap(decodeMembers),
          Effect.map((rows) => toMember(rows[0]!)),
          Effect.catchIf(isUniqueViolation, () => new Conflict({ message: "that user is already a member" })),
          storeFailure
        ),

      /**
       * Removes a member unless they are the last owner, or an owner while
       * `mayRemoveOwner` is false (the remover is neither an owner nor them); their sessions in the
       * organization end and the API keys they made there are revoked, in the
       * same transaction. Answers what happened, and the revoked keys' ids.
       */
      removeMember: (orgId: string, userId: string, mayRemoveOwner: boolean, now: Date) =>
        Effect.gen(function*() {
          const rows = yield* sql`SELECT role FROM memberships
            WHERE org_id = ${orgId} AND user_id = ${userId} FOR UPDATE`.pipe(Effect.flatMap(decodeRoles))
          if (rows.length === 0) return { outcome: "missing" as const, revokedKeys: [] }
          if (rows[0]!.role === "owner" && !mayRemoveOwner) return { outcome: "owner_only" as const, revokedKeys: [] }
          if (rows[0]!.role === "owner") {
            const owners = yield* sql`SELECT count(*) AS n FROM memberships
              WHERE org_id = ${orgId} AND role = 'owner'`.pipe(Effect.flatMap(decodeCount))
            if ((owners[0]?.n ?? 0) <= 1) return { outcome: "last_owner" as const, revokedKeys: [] }
          }
          yield* sql`DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`
          yield* sql`DELETE FROM sessions WHERE org_id = ${orgId} AND user_id = ${userId}`
          const revoked = yield* sql`UPDATE api_keys SET revoked_at = ${now}
            WHERE org_id = ${orgId} AND created_by = ${userId} AND revoked_at IS NULL RETURNING id`.pipe(Effect.flatMap(decodeKeyIds))
          return { outcome: "removed" as const, revokedKeys: revoked.map((row) => row.id) }
        }).pipe(sql.withTransaction, storeFailure)
    }
  })
}) {}
