import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { BILLING_WEBHOOK_PATH } from "../domain/Billing.ts"
import { BadRequest } from "../domain/Errors.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { Billing } from "../metering/Billing.ts"
import { renderFailures } from "./RawRoutes.ts"
import type { RawRoutes } from "./Routes.ts"

export const BillingHandlers = HttpApiBuilder.group(EngramApi, "billing", (handlers) =>
  Effect.map(Billing, (billing) =>
    handlers
      .handle("status", () => Effect.flatMap(requireSession, (principal) => billing.status(principal.orgId)))
      .handle("upgrade", ({ payload }) =>
        requireSession.pipe(
          Effect.zipRight(requireRole("owner", "admin")),
          Effect.flatMap((principal) => billing.upgrade(principal.orgId, payload.plan_id))
        ))
      .handle("checkout", ({ payload }) =>
        requireSession.pipe(
          Effect.zipRight(requireRole("owner", "admin")),
          Effect.flatMap((principal) => billing.checkout(principal.orgId, payload.plan_id))
        ))
      .handle("portal", () =>
        requireSession.pipe(Effect.zipRight(requireRole("owner", "admin")), Effect.flatMap((principal) => billing.portal(principal.orgId))))
      .handle("cancel", () =>
        requireSession.pipe(Effect.zipRight(requireRole("owner")), Effect.flatMap((principal) => billing.cancel(principal.orgId))))))

/** The processor's callback: no key or session, its signature over the raw body is the credential. */
const receive = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const payload = yield* Effect.mapError(request.text, () => new BadRequest({ message: "the request body could not be read" }))
  const outcome = yield* (yield* Billing).receive(payload, request.headers["stripe-signature"])
  return HttpServerResponse.unsafeJson(outcome)
})

/** The payment processor's webhook, for the route table. */
export const BILLING_ROUTES: RawRoutes = { routes: [["POST", BILLING_WEBHOOK_PATH]] }

export const BillingWebhookRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Billing>()
    yield* router.post(BILLING_WEBHOOK_PATH, renderFailures(receive).pipe(Effect.provide(context)))
  })
)
