/** Usage (key and organization), feedback: the metering surface of the API. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { SessionRequired, TooManyAttempts, ValidationError } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { SafeString } from "./SafeText.ts"
import { strict } from "./Strict.ts"

export const KeyUsage = Schema.Struct({
  credits_remaining: Schema.Int,
  credits_limit: Schema.Int,
  credits_used: Schema.Int,
  rate_limit_per_min: Schema.Int
})

const Instant = Schema.String.pipe(
  Schema.filter((s) => /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "must be an ISO 8601 date or date-time (2026-11-01 or 2026-11-01T00:00:00Z)"
  })
)

/** The window of organization usage: [from, to), default the calendar month to date; hourly or daily points. */
export const UsageWindow = Schema.Struct({
  from: Schema.optional(Instant),
  to: Schema.optional(Instant),
  granularity: Schema.optionalWith(Schema.Literal("hour", "day"), { default: () => "day" as const })
})
export type UsageWindow = typeof UsageWindow.Type

const OpCounts = Schema.Record({ key: Schema.String, value: Schema.Int })

/** Memory injection (length/4 estimates): blocks rendered into prompts, their tokens, and the part a provider could cache. */
export const InjectionFigures = Schema.Struct({
  injections: Schema.Int,
  injected_tokens: Schema.Int,
  /** Tokens of each block that repeat the start of the scope's previous block: eligible for provider caching, not a saving. */
  cache_prefix_tokens: Schema.Int
})

export const UsagePoint = Schema.Struct({
  start: Schema.String,
  credits: Schema.Int,
  /** Per operation: how many (memories stored, searches, insights, profiles, model tokens). */
  operations: OpCounts,
  memory_injection: InjectionFigures
})

export const OrgUsage = Schema.Struct({
  org_id: Schema.String,
  from: Schema.String,
  to: Schema.String,
  granularity: Schema.Literal("hour", "day"),
  credits_used: Schema.Int,
  memory_injection: InjectionFigures,
  series: Schema.Array(UsagePoint)
})

export const OperationTotal = Schema.Struct({ op_type: Schema.String, count: Schema.Int, credits: Schema.Int })

export const SpaceUsage = Schema.Struct({
  space_id: Schema.NullOr(Schema.String),
  credits: Schema.Int,
  operations: OpCounts,
  /** The space's two injection totals. */
  injected_tokens: Schema.Int,
  cache_prefix_tokens: Schema.Int
})

export const UsageBreakdown = Schema.Struct({
  org_id: Schema.String,
  from: Schema.String,
  to: Schema.String,
  credits_used: Schema.Int,
  operations: Schema.Array(OperationTotal),
  memory_injection: InjectionFigures,
  spaces: Schema.Array(SpaceUsage)
})

export const FeedbackRequest = strict(Schema.Struct({
  category: Schema.optionalWith(Schema.Literal("bug", "idea", "other"), { default: () => "other" as const }),
  message: SafeString.pipe(
    Schema.minLength(1),
    Schema.maxLength(4000),
    Schema.filter((s) => s.trim().length > 0, { message: () => "must not be only whitespace" })
  ),
  page: Schema.optional(SafeString.pipe(
    Schema.maxLength(200),
    Schema.filter((s) => s.startsWith("/") && !s.startsWith("//") && !/^[a-z][a-z0-9+.-]*:/i.test(s), {
      message: () => "must be a path such as /settings/keys, not a full URL"
    })
  ))
}))

export const FeedbackReceived = Schema.Struct({ status: Schema.Literal("received") })

export class UsageApi extends HttpApiGroup.make("usage")
  .add(HttpApiEndpoint.get("me", "/v1/usage/me").addSuccess(KeyUsage))
  .add(
    HttpApiEndpoint.get("org", "/v1/usage")
      .setUrlParams(UsageWindow)
      .addSuccess(OrgUsage)
      .addError(SessionRequired)
      .addError(ValidationError)
  )
  .add(
    HttpApiEndpoint.get("breakdown", "/v1/usage/breakdown")
      .setUrlParams(UsageWindow)
      .addSuccess(UsageBreakdown)
      .addError(SessionRequired)
      .addError(ValidationError)
  )
  .middleware(Authentication)
{}

export class FeedbackApi extends HttpApiGroup.make("feedback")
  .add(
    HttpApiEndpoint.post("send", "/v1/feedback")
      .setPayload(FeedbackRequest)
      .addSuccess(FeedbackReceived, { status: 202 })
      .addError(TooManyAttempts)
  )
  .middleware(Authentication)
{}

