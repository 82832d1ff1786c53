/**
 * A recall against the space's index: rank, select (scope, tags, dedup,
 * min_score, limit) and, for a full receipt, what the engine's own stages
 * left out. Reads the index without the writer's permit: the index changes
 * only synchronously after a commit, so a recall sees a write whole or not at all.
 */
import { Clock, Effect } from "effect"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import type { Memory } from "../domain/Memory.ts"
import { retrieveItem } from "../domain/MemoryViews.ts"
import type { Recall, RecallResult } from "../domain/SpaceProtocol.ts"
import type { EmbedderShape } from "../../services/embedder/Embedder.ts"
import { estimateTokens } from "../../services/llm/Provider.ts"
import { engineExclusions } from "./EngineStages.ts"
import { select } from "./Selection.ts"
import type { SpaceState } from "./SpaceState.ts"
import { unavailable } from "./WritePreparation.ts"

/**
 * A fact a newer one superseded (a changed attribute) never ranks above the
 * fact that superseded it: when both are ranked, it moves to just after it.
 */
export const currentFirst = <H extends { readonly id: string; readonly score: number }>(hits: ReadonlyArray<H>, state: SpaceState) => {
  const at = new Map(hits.map((hit, i) => [hit.id, i]))
  const moved = new Map<string, Array<H>>()
  const out: Array<H> = []
  const emit = (hit: H, ceiling: number) => {
    const placed = { ...hit, score: Math.min(hit.score, ceiling) }
    out.push(placed)
    for (const follower of moved.get(hit.id) ?? []) emit(follower, placed.score)
  }
  for (const hit of hits) {
    const by = state.meta(hit.id)?.supersededBy ?? null
    const byAt = by === null ? undefined : at.get(by)
    if (by !== null && byAt !== undefined && byAt > at.get(hit.id)!) {
      const list = moved.get(by) ?? []
      list.push(hit)
      moved.set(by, list)
      continue
    }
    emit(hit, hit.score)
  }
  return out
}

export const makeRecall = (deps: {
  readonly space: SpaceRef
  readonly state: SpaceState
  readonly embedder: EmbedderShape
  /** The memories of these ids as the store has them: for results whose texts a space just woken has not read yet. */
  readonly fromStore: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Memory>, ServiceUnavailable>
}) => {
  const { embedder, space, state } = deps
  return (recall: Recall) =>
    Effect.gen(function*() {
      const vector = yield* embedder.embed([recall.query]).pipe(
        Effect.map((vs) => vs[0]),
        Effect.mapError(unavailable("embedding failed"))
      )
      const cap = Math.min(100, recall.limit + 50)
      // A question's "last month" is read against the recall's query_time, or now.
      const now = yield* Clock.currentTimeMillis
      const rank = (mode: "fast" | "accurate", limit: number) => state.rank(recall, vector, mode, limit, now)
      // A full receipt looks past the candidate cap, and in fast mode at what the accurate stages would rank.
      const hits = currentFirst(rank(recall.mode, recall.full ? cap + 50 : cap), state)
      const considered = hits.slice(0, cap)
      const selection = select(considered, (id) => state.meta(id)?.type, recall, (id) => state.sourcesOf(id), (id) => {
        const text = state.textOf(id)
        return text === undefined ? undefined : estimateTokens(text)
      })
      const included = selection.included
      const excluded = recall.full
        ? engineExclusions({
          considered,
          beyondCap: hits.slice(cap),
          cap,
          limit: recall.limit,
          excluded: selection.excluded,
          accurateTop: recall.mode === "fast" ? rank("accurate", recall.limit).map((hit) => hit.id) : null,
          included: included.map((hit) => hit.id)
        })
        : selection.excluded
      const held = new Map<string, Memory>()
      for (const hit of included) {
        const memory = state.get(hit.id)
        if (memory !== undefined) held.set(hit.id, memory)
      }
      const missing = included.filter((hit) => !held.has(hit.id) && state.has(hit.id)).map((hit) => hit.id)
      if (missing.length > 0) for (const memory of yield* deps.fromStore(missing)) held.set(memory.id, memory)
      const results = included.flatMap((hit) => {
        const memory = held.get(hit.id)
        return memory === undefined ? [] : [retrieveItem(memory, hit.score)]
      })
      return { results, excluded, queryTokens: estimateTokens(recall.query) } satisfies RecallResult
    }).pipe(Effect.withSpan("Space.recall", { attributes: { org_id: space.orgId, space_id: space.spaceId, memories: state.size } }))
}
