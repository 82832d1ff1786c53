/**
 * Invitations by email. Emails compare case-insensitively; an invitation is
 * live while it is pending and unexpired. The schema allows one pending
 * invitation per (organization, email): an expired one is cleared when the
 * email is invited again.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, Schema } from "effect"
import { Conflict } from "../../src/domain/Errors.ts"
import { InvitationRole, InvitationStatus } from "../../src/domain/InvitationsApi.ts"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { isUniqueViolation, storeFailure } from "./SqlFailure.ts"

const InvitationRow = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  org_name: Schema.String,
  email: Schema.String,
  role: InvitationRole,
  status: InvitationStatus,
  invited_by: Schema.NullOr(Schema.String),
  created_at: Timestamptz,
  expires_at: Timestamptz,
  answered_at: Schema.NullOr(Timestamptz)
})
export type InvitationRow = typeof InvitationRow.Type

const decodeInvitations = decodeRows(InvitationRow)
const decodeIds = decodeRows(Schema.Struct({ id: Schema.String }))
const decodeGrants = decodeRows(Schema.Struct({ org_id: Schema.String, role: InvitationRole }))

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullable(rows[0])

export class InvitationRepo extends Effect.Service<InvitationRepo>()("engram/store/InvitationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = (where: ReadonlyArray<Statement.Fragment>) =>
      sql`SELECT i.id, i.org_id, o.name AS org_name, i.email, i.role, i.status, i.invited_by,
          i.created_at, i.expires_at, i.answered_at
        FROM invitations i JOIN organizations o ON o.id = i.org_id
        WHERE ${sql.and(where)} ORDER BY i.created_at, i.id`.pipe(Effect.flatMap(decodeInvitations))

    const live = (now: Date) => [sql`i.status = 'pending'`, sql`i.expires_at > ${now}`]

    return {
      /** A pending invitation; 409 when the email is already a member or already has a live invitation. */
      create: (input: {
        id: string
        orgId: string
        email: string
        role: InvitationRole
        invitedBy: string
        now: Date
        expiresAt: Date
      }) =>
        Effect.gen(function*() {
          const members = yield* sql`SELECT m.user_id AS id FROM memberships m JOIN users u ON u.id = m.user_id
            WHERE m.org_id = ${input.orgId} AND lower(u.email) = lower(${input.email})`.pipe(Effect.flatMap(decodeIds))
          if (members.length > 0) return yield* new Conflict({ message: "that email already belongs to a member" })
          yield* sql`DELETE FROM invitations WHERE org_id = ${input.orgId} AND lower(email) = lower(${input.email})
            AND status = 'pending' AND expires_at <= ${input.now}`
          yield* sql`INSERT INTO invitations (id, org_id, email, role, status, invited_by, created_at, expires_at)
            VALUES (${input.id}, ${input.orgId}, ${input.email}, ${input.role}, 'pending', ${input.invitedBy},
              ${input.now}, ${input.expiresAt})`
          const created = first(yield* select([sql`i.id = ${input.id}`]))
          return Option.isSome(created) ? created.value : yield* Effect.dieMessage("the new invitation did not read back")
        }).pipe(
          sql.withTransaction,
          Effect.catchIf((error) => error instanceof SqlError && isUniqueViolation(error), () => new Conflict({ message: "that email already has a pending invitation" })),
          storeFailure,
          Effect.withSpan("InvitationRepo.create")
        ),

      /** The organization's live invitations, oldest first. */
      listForOrg: (orgId: string, now: Date) => select([sql`i.org_id = ${orgId}`, ...live(now)]).pipe(storeFailure),

      /** The live invitations addressed to `email`, in any organization. */
      listForEmail: (email: string, now: Date) =>
        select([sql`lower(i.email) = lower(${email})`, ...live(now)]).pipe(storeFailure),

      /** A live invitation addressed to `email`. */
      findForEmail: (id: string, email: string, now: Date) =>
        select([sql`i.id = ${id}`, sql`lower(i.email) = lower(${email})`, ...live(now)]).pipe(
          Effect.map(first),
          storeFailure
        ),

      /** Withdraws a live invitation of the organization; false when there is none. */
      withdraw: (orgId: string, id: string, now: Date) =>
        sql`UPDATE invitations SET status = 'withdrawn', answered_at = ${now}
          WHERE id = ${id} AND org_id = ${orgId} AND status = 'pending' AND expires_at > ${now}
          RETURNING id`.pipe(Effect.flatMap(decodeIds), Effect.map((rows) => rows.length > 0), storeFailure),

      /**
       * Answers a live invitation addressed to `email`. Accepting makes the user
       * a member with the invitation's role; a user who already is one keeps
       * the role they have. None when there is no such live invitation.
       */
      answer: (input: { id: string; email: string; userId: string; answer: "accepted" | "declined"; now: Date }) =>
        Effect.gen(function*() {
          const answered = yield* sql`UPDATE invitations SET status = ${input.answer}, answered_at = ${input.now}
            WHERE id = ${input.id} AND lower(email) = lower(${input.email})
              AND status = 'pending' AND expires_at > ${input.now}
            RETURNING org_id, role`.pipe(Effect.flatMap(decodeGrants))
          const grant = answered[0]
          if (grant === undefined) return Option.none<InvitationRow>()
          if (input.answer === "accepted") {
            yield* sql`INSERT INTO memberships (org_id, user_id, role, created_at)
              VALUES (${grant.org_id}, ${input.userId}, ${grant.role}, ${input.now})
              ON CONFLICT (org_id, user_id) DO NOTHING`
          }
          return first(yield* select([sql`i.id = ${input.id}`]))
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("InvitationRepo.answer"))
    }
  })
}) {}
