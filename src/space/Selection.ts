/**
 * Which memories a recall may see (strict scope, tags, type, state, as_of) and,
 * of the ranked ones, which it returns and why the others were dropped, in the
 * documented order: dedup, min_score, limit.
 */
import type { Recall, Exclusion } from "../domain/SpaceProtocol.ts"
import type { TagsMatch } from "../domain/Memories.ts"
import type { MemoryRow } from "../../services/store/MemoryRepo.ts"

/**
 * Tag modes: `any` / `all` also admit untagged memories; `any_strict` /
 * `all_strict` need at least one / every requested tag; `exact` needs the same set.
 */
export const tagsAdmit = (memoryTags: ReadonlyArray<string>, wanted: ReadonlyArray<string> | null, mode: TagsMatch) => {
  if (wanted === null || wanted.length === 0) return true
  const has = new Set(memoryTags)
  switch (mode) {
    case "any":
      return has.size === 0 || wanted.some((t) => has.has(t))
    case "all":
      return has.size === 0 || wanted.every((t) => has.has(t))
    case "any_strict":
      return wanted.some((t) => has.has(t))
    case "all_strict":
      return wanted.every((t) => has.has(t))
    case "exact":
      return has.size === new Set(wanted).size && wanted.every((t) => has.has(t))
  }
}

/** Strict scope: a scoped recall sees only memories written under the same scope; an unscoped one sees all. */
const scopeAdmits = (value: string | null, wanted: string | null) => wanted === null || value === wanted

export const eligibility = (recall: Recall) => {
  const asOf = recall.asOf === null ? null : Date.parse(recall.asOf)
  const types = recall.memoryTypes === null || recall.memoryTypes.length === 0 ? null : new Set(recall.memoryTypes)
  return (row: MemoryRow) =>
    row.state === "active" &&
    (types === null || types.has(row.type)) &&
    scopeAdmits(row.user_id, recall.userId) &&
    scopeAdmits(row.agent_id, recall.agentId) &&
    scopeAdmits(row.session_id, recall.sessionId) &&
    tagsAdmit(row.tags, recall.tags, recall.tagsMatch) &&
    (asOf === null || new Date(row.created_at).getTime() <= asOf)
}

export interface Scored {
  readonly id: string
  readonly score: number
}

export const select = (
  ranked: ReadonlyArray<Scored>,
  rows: ReadonlyMap<string, MemoryRow>,
  recall: Recall
): { included: ReadonlyArray<Scored>; excluded: ReadonlyArray<Exclusion> } => {
  const excluded: Array<Exclusion> = []
  let kept: ReadonlyArray<Scored> = ranked
  if (recall.preferObservations) {
    const coveredBy = new Map<string, string>()
    for (const hit of ranked) {
      const row = rows.get(hit.id)
      if (row && row.type !== "fact") for (const source of row.source_ids) coveredBy.set(source, hit.id)
    }
    kept = kept.filter((hit) => {
      const note = coveredBy.get(hit.id)
      if (note === undefined || rows.get(hit.id)?.type !== "fact") return true
      excluded.push({ memory_id: hit.id, reason: "dedup", detail: `covered by ${note}` })
      return false
    })
  }
  if (recall.minScore !== null) {
    const floor = recall.minScore
    kept = kept.filter((hit) => {
      if (hit.score >= floor) return true
      excluded.push({ memory_id: hit.id, reason: "min_score", detail: `score ${hit.score.toFixed(4)} below floor ${floor}` })
      return false
    })
  }
  kept.slice(recall.limit).forEach((hit, i) =>
    excluded.push({ memory_id: hit.id, reason: "limit", detail: `rank ${recall.limit + i + 1} beyond limit ${recall.limit}` })
  )
  return { included: kept.slice(0, recall.limit), excluded }
}
