import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AddMemberRequest, MemberList, Organization, OrgMembershipList } from "./Accounts.ts"
import { SentInvitation } from "./InvitationsApi.ts"
import { Conflict, InsufficientRole, NotFound, SessionRequired } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"

export class OrgsApi extends HttpApiGroup.make("orgs")
  .add(HttpApiEndpoint.get("list", "/v1/orgs").addSuccess(OrgMembershipList))
  .add(HttpApiEndpoint.get("me", "/v1/orgs/me").addSuccess(Organization))
  .add(HttpApiEndpoint.get("listMembers", "/v1/orgs/me/members").addSuccess(MemberList))
  .add(
    // An invitation the user accepts, whether or not the email has an account: the answer never tells which.
    HttpApiEndpoint.post("addMember", "/v1/orgs/me/members")
      .setPayload(AddMemberRequest)
      .addSuccess(SentInvitation, { status: 201 })
      .addError(InsufficientRole)
      .addError(Conflict)
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/v1/orgs/me/members/:user_id")
      .setPath(Schema.Struct({ user_id: PathSegment }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(InsufficientRole)
      .addError(NotFound)
      .addError(Conflict)
  )
  .addError(SessionRequired)
  .middleware(Authentication)
{}
