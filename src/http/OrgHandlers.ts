import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { Accounts } from "../identity/Accounts.ts"

export const OrgHandlers = HttpApiBuilder.group(EngramApi, "orgs", (handlers) =>
  Effect.map(Accounts, (accounts) =>
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
      .handle("addMember", ({ payload }) =>
        requireSession.pipe(
          Effect.zipRight(requireRole("owner", "admin")),
          Effect.flatMap((principal) => accounts.addMember(principal, payload.email, payload.role))
        ))
      .handle("removeMember", ({ path }) =>
        requireSession.pipe(
          Effect.flatMap((principal) =>
            principal.userId === path.user_id ? Effect.succeed(principal) : requireRole("owner", "admin")
          ),
          Effect.flatMap((principal) => accounts.removeMember(principal, path.user_id))
        ))))
