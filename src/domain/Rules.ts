/** A space's rules: detectors of secrets and personal data, applied to every write before it is stored. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { DETECTORS } from "../security/Detectors.ts"
import { Forbidden, InsufficientRole, NotFound, SessionRequired, ValidationError } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment, SafeString } from "./SafeText.ts"
import { strict, Text } from "./Strict.ts"

export const Detector = Schema.Literal(...DETECTORS)
/** `redact` replaces what a rule finds, `block` refuses the write, `flag` stores it marked (`metadata.security_flags`). */
export const RuleAction = Schema.Literal("redact", "block", "flag")

export const Rule = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  detector: Detector,
  pattern: Schema.NullOr(Schema.String),
  action: RuleAction,
  enabled: Schema.Boolean,
  created_at: Schema.String
})
export type Rule = typeof Rule.Type

export const RuleList = Schema.Struct({ items: Schema.Array(Rule), total: Schema.Number })

const Pattern = SafeString.pipe(Schema.maxLength(500))

export const CreateRuleRequest = strict(Schema.Struct({
  name: Text(100),
  detector: Detector,
  /** Required for `regex`, refused otherwise. */
  pattern: Schema.optional(Pattern),
  action: RuleAction,
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true })
}))
export type CreateRuleRequest = typeof CreateRuleRequest.Type

export const UpdateRuleRequest = strict(Schema.Struct({
  name: Schema.optional(Text(100)),
  detector: Schema.optional(Detector),
  pattern: Schema.optional(Schema.NullOr(Pattern)),
  action: Schema.optional(RuleAction),
  enabled: Schema.optional(Schema.Boolean)
}))
export type UpdateRuleRequest = typeof UpdateRuleRequest.Type

const SpacePath = Schema.Struct({ space_id: PathSegment })
const RulePath = Schema.Struct({ space_id: PathSegment, rule_id: PathSegment })

export class RulesApi extends HttpApiGroup.make("rules")
  .add(HttpApiEndpoint.get("list", "/v1/spaces/:space_id/rules").setPath(SpacePath).addSuccess(RuleList))
  .add(
    HttpApiEndpoint.post("create", "/v1/spaces/:space_id/rules")
      .setPath(SpacePath)
      .setPayload(CreateRuleRequest)
      .addSuccess(Rule, { status: 201 })
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/spaces/:space_id/rules/:rule_id")
      .setPath(RulePath)
      .setPayload(UpdateRuleRequest)
      .addSuccess(Rule)
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/spaces/:space_id/rules/:rule_id")
      .setPath(RulePath)
      .addSuccess(HttpApiSchema.NoContent)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .addError(InsufficientRole)
  .addError(SessionRequired)
  .addError(ValidationError)
  .middleware(Authentication)
{}
