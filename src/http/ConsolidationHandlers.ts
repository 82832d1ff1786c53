import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { Principal } from "../domain/Principal.ts"
import { ConsolidationStatusService } from "../space/ConsolidationStatus.ts"

export const ConsolidationHandlers = HttpApiBuilder.group(EngramApi, "consolidation", (handlers) =>
  Effect.map(ConsolidationStatusService, (service) =>
    handlers.handle("status", ({ path }) => Effect.flatMap(Principal, (principal) => service.status(principal, path.space_id)))))
