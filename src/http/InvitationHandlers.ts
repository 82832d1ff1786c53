import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { InvitationMail, Invitations } from "../identity/Invitations.ts"

const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** Where the request was sent (`Host`, and `X-Forwarded-Proto` from a proxy), for links when PUBLIC_URL is unset. */
export const requestOrigin = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const host = request.headers["host"]
  if (host === undefined || !HOST.test(host)) return Option.none<string>()
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https" ? "https" : "http"
  return Option.some(`${proto}://${host}`)
})

const manager = requireSession.pipe(Effect.zipRight(requireRole("owner", "admin")))

const OrgInvitationHandlers = HttpApiBuilder.group(EngramApi, "orgInvitations", (handlers) =>
  Effect.map(Invitations, (invitations) =>
    handlers
      .handle("invite", ({ payload }) =>
        Effect.flatMap(manager, (principal) =>
          Effect.flatMap(requestOrigin, (origin) => invitations.invite(principal, payload, origin))))
      .handle("listSent", () =>
        Effect.flatMap(manager, (principal) =>
          requestOrigin.pipe(
            Effect.flatMap((origin) => invitations.listSent(principal, origin)),
            Effect.map((items) => ({ items, total: items.length }))
          )))
      .handle("withdraw", ({ path }) => Effect.flatMap(manager, (principal) => invitations.withdraw(principal, path.id)))))

const InviteeHandlers = HttpApiBuilder.group(EngramApi, "invitations", (handlers) =>
  Effect.map(Invitations, (invitations) =>
    handlers
      .handle("listMine", () =>
        requireSession.pipe(
          Effect.flatMap(invitations.listMine),
          Effect.map((items) => ({ items, total: items.length }))
        ))
      .handle("show", ({ path }) => Effect.flatMap(requireSession, (principal) => invitations.show(principal, path.id)))
      .handle("accept", ({ path }) =>
        Effect.flatMap(requireSession, (principal) => invitations.answer(principal, path.id, "accepted")))
      .handle("decline", ({ path }) =>
        Effect.flatMap(requireSession, (principal) => invitations.answer(principal, path.id, "declined")))))

/** Both groups on the invitations service; `InvitationMail.none`: links go to the log and the inviter only. */
export const InvitationHandlers = Layer.mergeAll(OrgInvitationHandlers, InviteeHandlers).pipe(
  Layer.provide(Invitations.Default),
  Layer.provide(InvitationMail.none)
)
