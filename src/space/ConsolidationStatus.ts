/** What `GET /v1/spaces/{id}/consolidation` answers: read from the store, like the memory list. */
import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { Consolidator } from "../consolidation/Consolidator.ts"
import type { ConsolidationStatus } from "../domain/ConsolidationApi.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { ConsolidationRepo } from "../../services/store/ConsolidationRepo.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { spaceRef } from "../domain/Ids.ts"

export class ConsolidationStatusService extends Effect.Service<ConsolidationStatusService>()("engram/space/ConsolidationStatus", {
  dependencies: [Spaces.Default, ConsolidationRepo.Default],
  effect: Effect.gen(function*() {
    const spaces = yield* Spaces
    const runs = yield* ConsolidationRepo
    const consolidator = yield* Consolidator
    const config = yield* AppConfig
    return {
      status: Effect.fn("Consolidation.status")(function*(principal: PrincipalShape, spaceId: string) {
        yield* spaces.get(principal, spaceId)
        const ref = spaceRef(principal, spaceId)
        const recent = yield* runs.runs(ref, 20)
        return {
          space_id: spaceId,
          enabled: config.consolidation,
          engine: consolidator.engine,
          pending_facts: yield* runs.pendingCount(ref),
          runs: recent.map((run) => ({
            engine: run.engine,
            facts: run.facts,
            observations_created: run.observations_created,
            observations_updated: run.observations_updated,
            observations_deleted: run.observations_deleted,
            error_message: run.error_message,
            started_at: run.started_at.toISOString(),
            finished_at: run.finished_at.toISOString()
          }))
        } satisfies ConsolidationStatus
      })
    }
  })
}) {}
