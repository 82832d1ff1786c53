/** Sign-up, sign-in and the organization a session acts in. */
import { Schema } from "effect"
import { Role } from "./Principal.ts"
import { SafeString } from "./SafeText.ts"
import { strict, Text } from "./Strict.ts"

export const Email = SafeString.pipe(
  Schema.compose(Schema.Trim),
  Schema.compose(Schema.Lowercase),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an email address" }),
  Schema.maxLength(254)
)

export const Password = SafeString.pipe(Schema.minLength(8), Schema.maxLength(256))

export const SignupRequest = strict(Schema.Struct({ email: Email, password: Password, org_name: Text(200) }))

export const LoginRequest = strict(Schema.Struct({
  email: Email,
  password: SafeString.pipe(Schema.maxLength(256)),
  org_id: Schema.optional(SafeString.pipe(Schema.maxLength(256)))
}))

export const SessionResponse = Schema.Struct({
  user_id: Schema.String,
  org_id: Schema.String,
  role: Role,
  session_token: Schema.String,
  expires_at: Schema.String
})

export const Organization = Schema.Struct({
  org_id: Schema.String,
  name: Schema.String,
  created_at: Schema.String,
  role: Role,
  user_id: Schema.String,
  email: Schema.String
})

export const Member = Schema.Struct({
  user_id: Schema.String,
  email: Schema.String,
  role: Role,
  created_at: Schema.String
})
export type Member = typeof Member.Type

export const MemberList = Schema.Struct({ items: Schema.Array(Member), total: Schema.Number })

export const AddMemberRequest = strict(Schema.Struct({
  email: Email,
  role: Schema.optionalWith(Role, { default: () => "member" as const })
}))

/** One organization the signed-in user belongs to; `current` marks the one the session acts in. */
export const OrgMembership = Schema.Struct({
  org_id: Schema.String,
  name: Schema.String,
  role: Role,
  created_at: Schema.String,
  joined_at: Schema.String,
  current: Schema.Boolean
})

export const OrgMembershipList = Schema.Struct({ items: Schema.Array(OrgMembership), total: Schema.Number })

export const SwitchRequest = strict(Schema.Struct({ org_id: SafeString.pipe(Schema.minLength(1), Schema.maxLength(256)) }))
