/**
 * Invitations by email: an organization's owners and admins send them, the
 * signed-in user with that email answers them. No mail server is needed: the
 * link is logged at info and returned to the inviter; `InvitationMail` is
 * where a deployment hands it to one.
 */
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { InsufficientRole, NotFound } from "../domain/Errors.ts"
import { INVITATION_TTL_DAYS, type Invitation, type InvitationRole, type SentInvitation } from "../domain/InvitationsApi.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { AccountRepo } from "../../services/store/AccountRepo.ts"
import { InvitationRepo, type InvitationRow } from "../../services/store/InvitationRepo.ts"

export interface InvitationMessage {
  readonly to: string
  readonly orgName: string
  readonly role: InvitationRole
  readonly inviteUrl: string
  readonly expiresAt: string
}

/**
 * Delivers an invitation's link to the invitee. `none` delivers nothing (the
 * link is in the log and the inviter's response); a deployment with a mail
 * server provides a layer that sends it. Delivery never fails the invitation:
 * an implementation logs its own failures.
 */
export class InvitationMail extends Context.Tag("engram/identity/InvitationMail")<InvitationMail, {
  readonly send: (message: InvitationMessage) => Effect.Effect<void>
}>() {
  static readonly none = Layer.succeed(InvitationMail, { send: () => Effect.void })
}

const TTL = Duration.days(INVITATION_TTL_DAYS)

const toInvitation = (row: InvitationRow): Invitation => ({
  id: row.id,
  org_id: row.org_id,
  org_name: row.org_name,
  email: row.email,
  role: row.role,
  status: row.status,
  invited_by: row.invited_by,
  created_at: row.created_at.toISOString(),
  expires_at: row.expires_at.toISOString(),
  answered_at: row.answered_at === null ? null : row.answered_at.toISOString()
})

const notFound = () => new NotFound({ message: "no pending invitation with that id for you" })

export class Invitations extends Effect.Service<Invitations>()("engram/identity/Invitations", {
  dependencies: [InvitationRepo.Default, AccountRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* InvitationRepo
    const accounts = yield* AccountRepo
    const config = yield* AppConfig
    const mail = yield* InvitationMail
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

    /** PUBLIC_URL when set, else the address the request came to. */
    const inviteUrl = (origin: Option.Option<string>, id: string) => {
      const base = Option.getOrElse(Option.orElse(config.publicUrl, () => origin), () => `http://localhost:${config.port}`)
      return `${base}/v1/invitations/${id}`
    }
    const sent = (origin: Option.Option<string>) => (row: InvitationRow): SentInvitation => ({
      ...toInvitation(row),
      invite_url: inviteUrl(origin, row.id)
    })

    const invite = Effect.fn("Invitations.invite")(function*(
      principal: PrincipalShape,
      input: { readonly email: string; readonly role: InvitationRole },
      origin: Option.Option<string>
    ) {
      if (input.role === "owner" && principal.role !== "owner") {
        return yield* new InsufficientRole({ message: "only an owner can invite another owner" })
      }
      const at = yield* now
      const row = yield* repo.create({
        id: `inv_${randomBase62(16)}`,
        orgId: principal.orgId,
        email: input.email,
        role: input.role,
        invitedBy: principal.userId,
        now: at,
        expiresAt: new Date(at.getTime() + Duration.toMillis(TTL))
      })
      const invitation = sent(origin)(row)
      yield* Effect.annotateCurrentSpan({ org_id: row.org_id, invitation_id: row.id })
      yield* Effect.logInfo("invitation created").pipe(Effect.annotateLogs({
        invitation_id: row.id,
        org_id: row.org_id,
        email: row.email,
        role: row.role,
        invite_url: invitation.invite_url,
        expires_at: invitation.expires_at
      }))
      yield* mail.send({
        to: row.email,
        orgName: row.org_name,
        role: row.role,
        inviteUrl: invitation.invite_url,
        expiresAt: invitation.expires_at
      })
      return invitation
    })

    const listSent = Effect.fn("Invitations.listSent")(function*(principal: PrincipalShape, origin: Option.Option<string>) {
      return (yield* repo.listForOrg(principal.orgId, yield* now)).map(sent(origin))
    })

    const withdraw = Effect.fn("Invitations.withdraw")(function*(principal: PrincipalShape, id: string) {
      if (!(yield* repo.withdraw(principal.orgId, id, yield* now))) {
        return yield* new NotFound({ message: "no pending invitation with that id" })
      }
    })

    const listMine = Effect.fn("Invitations.listMine")(function*(principal: PrincipalShape) {
      const email = yield* accounts.userEmail(principal.userId)
      return (yield* repo.listForEmail(email, yield* now)).map(toInvitation)
    })

    const show = Effect.fn("Invitations.show")(function*(principal: PrincipalShape, id: string) {
      const email = yield* accounts.userEmail(principal.userId)
      const row = yield* repo.findForEmail(id, email, yield* now)
      return Option.isSome(row) ? toInvitation(row.value) : yield* notFound()
    })

    /** Accepting joins the organization with the invitation's role (an existing member keeps theirs). */
    const answer = Effect.fn("Invitations.answer")(function*(principal: PrincipalShape, id: string, answer: "accepted" | "declined") {
      const email = yield* accounts.userEmail(principal.userId)
      const row = yield* repo.answer({ id, email, userId: principal.userId, answer, now: yield* now })
      if (Option.isNone(row)) return yield* notFound()
      yield* Effect.annotateCurrentSpan({ org_id: row.value.org_id, invitation_id: id })
      return toInvitation(row.value)
    })

    return { invite, listSent, withdraw, listMine, show, answer }
  })
}) {}
