/** Organizations, users and memberships. Every read names the organization it is scoped to. */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Conflict } from "../../src/domain/Errors.ts"
import type { Role } from "../../src/domain/Principal.ts"
import { iso, isUniqueViolation, storeFailure } from "./SqlFailure.ts"

interface MemberRow {
  readonly user_id: string
  readonly email: string
  readonly role: Role
  readonly created_at: Date
}

const toMember = (row: MemberRow) => ({ user_id: row.user_id, email: row.email, role: row.role, created_at: iso(row.created_at) })

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
      sql<{ id: string; password_hash: string }>`SELECT id, password_hash FROM users WHERE email = ${email}`.pipe(
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
          ? sql<{ org_id: string; role: Role }>`SELECT org_id, role FROM memberships WHERE user_id = ${userId}
              ORDER BY created_at, org_id LIMIT 1`
          : sql<{ org_id: string; role: Role }>`SELECT org_id, role FROM memberships
              WHERE user_id = ${userId} AND org_id = ${orgId}`).pipe(
            Effect.map((rows) => Option.fromNullable(rows[0])),
            storeFailure
          ),

      organization: (orgId: string) =>
        sql<{ id: string; name: string; created_at: Date }>`SELECT id, name, created_at FROM organizations WHERE id = ${orgId}`
          .pipe(
            Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r) => ({ ...r, created_at: iso(r.created_at) })))),
            storeFailure
          ),

      /** The organization's first owner, who acts for the operator CLI. */
      firstOwner: (orgId: string) =>
        sql<{ user_id: string }>`SELECT user_id FROM memberships WHERE org_id = ${orgId} AND role = 'owner'
          ORDER BY created_at, user_id LIMIT 1`.pipe(
          Effect.map((rows) => Option.fromNullable(rows[0]?.user_id)),
          storeFailure
        ),

      userEmail: (userId: string) =>
        sql<{ email: string }>`SELECT email FROM users WHERE id = ${userId}`.pipe(
          Effect.map((rows) => rows[0]?.email ?? ""),
          storeFailure
        ),

      listMembers: (orgId: string) =>
        sql<MemberRow>`SELECT m.user_id, u.email, m.role, m.created_at FROM memberships m
          JOIN users u ON u.id = m.user_id WHERE m.org_id = ${orgId} ORDER BY m.created_at, m.user_id`.pipe(
          Effect.map((rows) => rows.map(toMember)),
          storeFailure
        ),

      addMember: (input: { orgId: string; userId: string; role: Role; now: Date }) =>
        sql<MemberRow>`WITH added AS (
            INSERT INTO memberships (org_id, user_id, role, created_at)
            VALUES (${input.orgId}, ${input.userId}, ${input.role}, ${input.now}) RETURNING *)
          SELECT a.user_id, u.email, a.role, a.created_at FROM added a JOIN users u ON u.id = a.user_id`.pipe(
          Effect.map((rows) => toMember(rows[0]!)),
          Effect.catchIf(isUniqueViolation, () => new Conflict({ message: "that user is already a member" })),
          storeFailure
        ),

      /** Removes a member unless they are the last owner; answers what happened. */
      removeMember: (orgId: string, userId: string) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ role: Role }>`SELECT role FROM memberships
            WHERE org_id = ${orgId} AND user_id = ${userId} FOR UPDATE`
          if (rows.length === 0) return "missing" as const
          if (rows[0]!.role === "owner") {
            const owners = yield* sql<{ n: string }>`SELECT count(*) AS n FROM memberships
              WHERE org_id = ${orgId} AND role = 'owner'`
            if (Number(owners[0]!.n) <= 1) return "last_owner" as const
          }
          yield* sql`DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`
          yield* sql`DELETE FROM sessions WHERE org_id = ${orgId} AND user_id = ${userId}`
          return "removed" as const
        }).pipe(sql.withTransaction, storeFailure)
    }
  })
}) {}
