/**
 * Invitations by email: owners and admins of the session's organization send
 * and withdraw them; the signed-in user whose email they name accepts or
 * declines them. Session only.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Email } from "./Accounts.ts"
import { Conflict, InsufficientRole, NotFound, SessionRequired } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"
import { strict } from "./Strict.ts"

/** The roles `POST /v1/orgs/me/invitations` may grant: owners are invited by an owner, through the members endpoint. */
export const InvitedRole = Schema.Literal("admin", "member")
export type InvitedRole = typeof InvitedRole.Type

/** The role an invitation grants on acceptance (an owner's invitation through the members endpoint may grant owner). */
export const InvitationRole = Schema.Literal("owner", "admin", "member")
export type InvitationRole = typeof InvitationRole.Type

export const InvitationStatus = Schema.Literal("pending", "accepted", "declined", "withdrawn")
export type InvitationStatus = typeof InvitationStatus.Type

/** Invitations live for seven days. */
export const INVITATION_TTL_DAYS = 7

export const Invitation = Schema.Struct({
  id: Schema.String,
  org_id: Schema.String,
  org_name: Schema.String,
  email: Schema.String,
  role: InvitationRole,
  status: InvitationStatus,
  invited_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  expires_at: Schema.String,
  answered_at: Schema.NullOr(Schema.String)
})
export type Invitation = typeof Invitation.Type

/** What the inviting organization sees: the invitation and the link to pass on. */
export const SentInvitation = Schema.extend(Invitation, Schema.Struct({ invite_url: Schema.String }))
export type SentInvitation = typeof SentInvitation.Type

export const InvitationList = Schema.Struct({ items: Schema.Array(Invitation), total: Schema.Number })
export const SentInvitationList = Schema.Struct({ items: Schema.Array(SentInvitation), total: Schema.Number })

export const InviteRequest = strict(Schema.Struct({
  email: Email,
  role: Schema.optionalWith(InvitedRole, { default: () => "member" as const })
}))

const InvitationPath = Schema.Struct({ id: PathSegment })

export class OrgInvitationsApi extends HttpApiGroup.make("orgInvitations")
  .add(
    HttpApiEndpoint.post("invite", "/v1/orgs/me/invitations")
      .setPayload(InviteRequest)
      .addSuccess(SentInvitation, { status: 201 })
      .addError(InsufficientRole)
      .addError(Conflict)
  )
  .add(HttpApiEndpoint.get("listSent", "/v1/orgs/me/invitations").addSuccess(SentInvitationList).addError(InsufficientRole))
  .add(
    HttpApiEndpoint.del("withdraw", "/v1/orgs/me/invitations/:id")
      .setPath(InvitationPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(InsufficientRole)
      .addError(NotFound)
  )
  .addError(SessionRequired)
  .middleware(Authentication)
{}

export class InvitationsApi extends HttpApiGroup.make("invitations")
  .add(HttpApiEndpoint.get("listMine", "/v1/invitations").addSuccess(InvitationList))
  .add(HttpApiEndpoint.get("show", "/v1/invitations/:id").setPath(InvitationPath).addSuccess(Invitation).addError(NotFound))
  .add(HttpApiEndpoint.post("accept", "/v1/invitations/:id/accept").setPath(InvitationPath).addSuccess(Invitation).addError(NotFound))
  .add(HttpApiEndpoint.post("decline", "/v1/invitations/:id/decline").setPath(InvitationPath).addSuccess(Invitation).addError(NotFound))
  .addError(SessionRequired)
  .middleware(Authentication)
{}
