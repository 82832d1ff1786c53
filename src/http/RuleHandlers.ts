import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { Rules } from "../security/Rules.ts"

/** A space's rules: its organization's owner, on a session; free. */
export const RuleHandlers = HttpApiBuilder.group(EngramApi, "rules", (handlers) =>
  Effect.map(Rules, (rules) =>
    handlers
      .handle("list", ({ path }) => Effect.flatMap(Principal, (p) => rules.list(p, path.space_id)))
      .handle("create", ({ path, payload }) => Effect.flatMap(Principal, (p) => rules.create(p, path.space_id, payload)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(Principal, (p) => rules.update(p, path.space_id, path.rule_id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (p) => rules.delete(p, path.space_id, path.rule_id)))))
