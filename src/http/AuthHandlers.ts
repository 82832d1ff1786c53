import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireSession } from "../domain/Principal.ts"
import { Accounts } from "../identity/Accounts.ts"

export const AuthHandlers = HttpApiBuilder.group(EngramApi, "auth", (handlers) =>
  Effect.map(Accounts, (accounts) =>
    handlers
      .handle("signup", ({ payload }) =>
        accounts.signup({ email: payload.email, password: payload.password, orgName: payload.org_name }))
      .handle("login", ({ payload }) =>
        accounts.login({ email: payload.email, password: payload.password, orgId: payload.org_id }))))

export const LogoutHandlers = HttpApiBuilder.group(EngramApi, "logout", (handlers) =>
  Effect.map(Accounts, (accounts) =>
    handlers.handle("logout", () => Effect.flatMap(requireSession, accounts.logout))))

export const SwitchHandlers = HttpApiBuilder.group(EngramApi, "switch", (handlers) =>
  Effect.map(Accounts, (accounts) =>
    handlers.handle("switch", ({ payload }) =>
      Effect.flatMap(requireSession, (principal) => accounts.switchOrganization(principal, payload.org_id)))))
