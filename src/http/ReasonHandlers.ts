import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { Reason } from "../reason/Reason.ts"
import { ReasonSettings } from "../reason/ReasonSettings.ts"

/** Reason and the space's reason settings: any member of the organization, by key or session; settings are free. */
export const ReasonHandlers = HttpApiBuilder.group(EngramApi, "reason", (handlers) =>
  Effect.gen(function*() {
    const reasoning = yield* Reason
    const settings = yield* ReasonSettings
    return handlers
      .handle("reason", ({ payload }) => Effect.flatMap(Principal, (p) => reasoning.reason(p, payload)))
      .handle("getSettings", ({ path }) => Effect.flatMap(Principal, (p) => settings.get(p, path.space_id)))
      .handle("putSettings", ({ path, payload }) => Effect.flatMap(Principal, (p) => settings.put(p, path.space_id, payload)))
      .handle("deleteSettings", ({ path }) => Effect.flatMap(Principal, (p) => settings.reset(p, path.space_id)))
  }))
