import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal, requireSession } from "../domain/Principal.ts"
import { Feedback } from "../metering/Feedback.ts"
import { Metering } from "../metering/Metering.ts"
import { UsageReports } from "../metering/Usage.ts"

export const UsageHandlers = HttpApiBuilder.group(EngramApi, "usage", (handlers) =>
  Effect.gen(function*() {
    const metering = yield* Metering
    const reports = yield* UsageReports
    return handlers
      .handle("me", () => Effect.flatMap(Principal, (principal) => metering.usage(principal.orgId)))
      .handle("org", ({ urlParams }) => Effect.flatMap(requireSession, (principal) => reports.series(principal.orgId, urlParams)))
      .handle("breakdown", ({ urlParams }) =>
        Effect.flatMap(requireSession, (principal) => reports.breakdown(principal.orgId, urlParams)))
  }))

export const FeedbackHandlers = HttpApiBuilder.group(EngramApi, "feedback", (handlers) =>
  Effect.map(Feedback, (feedback) =>
    handlers.handle("send", ({ payload }) => Effect.flatMap(Principal, (principal) => feedback.send(principal, payload)))))
