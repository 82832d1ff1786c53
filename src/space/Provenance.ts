/**
 * Deletes follow provenance: when facts are deleted, replaced, retired or
 * edited, the syntheses built on them (and the summaries built on those) go
 * in the same transaction, so a deleted fact's words never survive in a
 * note, and the other facts behind them are pending again, to be
 * consolidated anew by the next run.
 */
import { Effect } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import type { IndexedMemory } from "../domain/Memory.ts"
import type { ConsolidationRepo } from "../../services/store/ConsolidationRepo.ts"
import type { ModelRepo } from "../../services/store/ModelRepo.ts"
import type { SpaceState } from "./SpaceState.ts"

export interface Unbuilt {
  readonly removed: ReadonlyArray<string>
  /** Facts pending again, as they are now (and, for an edit, the edited fact itself). */
  readonly repended: ReadonlyArray<IndexedMemory>
}

export const nothingUnbuilt: Unbuilt = { removed: [], repended: [] }

export const makeProvenance = (deps: {
  readonly space: SpaceRef
  readonly state: SpaceState
  readonly consolidation: ConsolidationRepo
  readonly models: ModelRepo
}) => {
  const { consolidation, models, space, state } = deps

  /** Whether changing these memories takes any synthesis with it. */
  const touches = (ids: Iterable<string>) => state.dependentsOf(ids).length > 0

  /**
   * Inside the transaction of the change: removes what was built on `changed`
   * and marks the rest of its facts (and `repend`, facts that stay but must be
   * looked at again) pending, and the memory models that may have drawn on
   * any of it stale. `changed` are still in the index.
   */
  const unbuild = (changed: ReadonlyArray<string>, now: Date, repend: ReadonlyArray<string> = []) =>
    Effect.gen(function*() {
      if (changed.length === 0) return nothingUnbuilt
      const dependents = state.dependentsOf(changed)
      const gone = new Set([...changed, ...dependents.map((d) => d.id)])
      const others = dependents.flatMap((d) => d.sourceIds).filter((id) => !gone.has(id))
      const removed = yield* consolidation.remove(space, dependents.map((d) => d.id))
      const repended = yield* consolidation.repend(space, [...new Set([...others, ...repend])])
      const touched = [...changed, ...dependents.map((d) => d.id)].flatMap((id) => {
        const memory = state.meta(id)
        return memory === undefined ? [] : [memory.tags]
      })
      yield* models.markStale(space, touched)
      if (removed.length > 0) {
        yield* consolidation.recordRun(space, {
          engine: "provenance",
          facts: changed.length,
          created: 0,
          updated: 0,
          deleted: removed.length,
          error: null,
          startedAt: now
        }, now)
      }
      return { removed: removed.map((r) => r.id), repended } satisfies Unbuilt
    })

  /** After the commit: the index follows. */
  const apply = (unbuilt: Unbuilt) => {
    for (const id of unbuilt.removed) state.remove(id)
    for (const memory of unbuilt.repended) state.put(memory)
  }

  return { touches, unbuild, apply }
}

export type Provenance = ReturnType<typeof makeProvenance>
