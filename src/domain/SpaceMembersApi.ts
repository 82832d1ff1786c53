/** A space shared with other organizations: who may reach it, and how. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Forbidden, InsufficientRole, NotFound, SessionRequired, ValidationError } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment, SafeString } from "./SafeText.ts"
import { strict } from "./Strict.ts"

export const SpaceMember = Schema.Struct({
  org_id: Schema.String,
  name: Schema.String,
  /** `owner` for the organization that holds the space; `member` for one it is shared with. */
  role: Schema.Literal("owner", "member"),
  access: Schema.Literal("read", "write"),
  added_at: Schema.String
})
export type SpaceMember = typeof SpaceMember.Type

export const SpaceMemberList = Schema.Struct({ items: Schema.Array(SpaceMember), total: Schema.Number })

export const AddSpaceMemberRequest = strict(Schema.Struct({
  org_id: SafeString.pipe(Schema.minLength(1), Schema.maxLength(64)),
  access: Schema.Literal("read", "write")
}))
export type AddSpaceMemberRequest = typeof AddSpaceMemberRequest.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })
const MemberPath = Schema.Struct({ space_id: PathSegment, org_id: PathSegment })

export class SpaceMembersApi extends HttpApiGroup.make("spaceMembers")
  .add(HttpApiEndpoint.get("list", "/v1/spaces/:space_id/members").setPath(SpacePath).addSuccess(SpaceMemberList))
  .add(
    HttpApiEndpoint.post("add", "/v1/spaces/:space_id/members")
      .setPath(SpacePath)
      .setPayload(AddSpaceMemberRequest)
      .addSuccess(SpaceMember, { status: 201 })
      .addError(ValidationError)
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/spaces/:space_id/members/:org_id")
      .setPath(MemberPath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .addError(InsufficientRole)
  .addError(SessionRequired)
  .middleware(Authentication)
{}
