import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { ChatSettingsService } from "../proxy/ChatSettingsService.ts"

/** Free, and open to any key or session of the organization. */
export const ChatSettingsHandlers = HttpApiBuilder.group(EngramApi, "chatSettings", (handlers) =>
  Effect.map(ChatSettingsService, (settings) =>
    handlers
      .handle("get", ({ path }) => Effect.flatMap(Principal, (p) => settings.get(p, path.space_id)))
      .handle("put", ({ path, payload }) => Effect.flatMap(Principal, (p) => settings.put(p, path.space_id, payload)))
      .handle("reset", ({ path }) => Effect.flatMap(Principal, (p) => settings.reset(p, path.space_id)))))
