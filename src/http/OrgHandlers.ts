import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { Accounts } from "../identity/Accounts.ts"
import { InvitationMail, Invitations } from "../identity/Invitations.ts"
import { requestOrigin } from "./InvitationHandlers.ts"

export const OrgHandlers = HttpApiBuilder.group(EngramApi, "orgs", (handlers) =>
  Effect.map(Effect.all([Accounts, Invitations]), ([accounts, invitations]) =>
    handlers
      .handle("list", () =>
        requireSession.pipe(
          Effect.flatMap(accounts.organizations),
          Effect.map((items) => ({ items, total: items.length }))
        ))
      .handle("me", () => Effect.flatMap(requireSession, accounts.organization))
      .handle("listMembers", () =>
        requireSession.pipe(
          Effect.flatMap(accounts.members),
          Effect.map((items) => ({ items, total: items.length }))
        ))
      // Adding a member invites them: they join when they accept (docs/api.md, Organizations).
      .handle("addMember", ({ payload }) =>
        requireSession.pipe(
          Effect.zipRight(requireRole("owner", "admin")),
          Effect.flatMap((principal) =>
            Effect.flatMap(requestOrigin, (origin) => invitations.invite(principal, { email: payload.email, role: payload.role }, origin)))
        ))
      .handle("removeMember", ({ path }) =>
        requireSession.pipe(
          Effect.flatMap((principal) =>
            principal.userId === path.user_id ? Effect.succeed(principal) : requireRole("owner", "admin")
          ),
          Effect.flatMap((principal) => accounts.removeMember(principal, path.user_id))
        )))).pipe(
  // The members endpoint invites as the invitations endpoint does; links go to the log and the inviter.
  Layer.provide(Invitations.Default),
  Layer.provide(InvitationMail.none)
)
