/**
 * `receipt_detail: "full"`: what the engine's own stages left out, beside the
 * reasons every receipt carries. A memory keeps one reason: the engine's when
 * it explains the drop better than `limit` does.
 */
import type { Exclusion } from "../domain/SpaceProtocol.ts"

export interface StagedHit {
  readonly id: string
  /** Final score, the sigmoid of the fused score plus what the accurate-mode stages added or took away. */
  readonly score: number
  readonly boost: number
}

const firstStage = (hit: StagedHit) => {
  const p = Math.min(Math.max(hit.score, 1e-12), 1 - 1e-12)
  return Math.log(p / (1 - p)) - hit.boost
}

export interface StageInput {
  /** The hits selection saw, best first. */
  readonly considered: ReadonlyArray<StagedHit>
  /** Ranked hits past the candidate cap, never seen by selection. */
  readonly beyondCap: ReadonlyArray<StagedHit>
  readonly cap: number
  readonly limit: number
  readonly excluded: ReadonlyArray<Exclusion>
  /** In fast mode, the ids an accurate run ranks within the limit; null in accurate mode. */
  readonly accurateTop: ReadonlyArray<string> | null
  readonly included: ReadonlyArray<string>
}

export const engineExclusions = (input: StageInput): ReadonlyArray<Exclusion> => {
  const firstRank = new Map(
    [...input.considered].sort((a, b) => firstStage(b) - firstStage(a)).map((hit, i) => [hit.id, i + 1] as const)
  )
  const finalRank = new Map(input.considered.map((hit, i) => [hit.id, i + 1] as const))
  const result: Array<Exclusion> = input.excluded.map((exclusion) => {
    const before = firstRank.get(exclusion.memory_id)
    if (exclusion.reason !== "limit" || before === undefined || before > input.limit) return exclusion
    return {
      memory_id: exclusion.memory_id,
      reason: "rerank_rank",
      detail: `first-stage rank ${before} was within limit ${input.limit}; rank ${
        finalRank.get(exclusion.memory_id)
      } after the rerank (neighbours, entities, speakers and dates)`
    }
  })
  input.beyondCap.forEach((hit, i) =>
    result.push({
      memory_id: hit.id,
      reason: "candidate_cap",
      detail: `rank ${input.cap + i + 1} beyond the candidate cap of ${input.cap}`
    })
  )
  if (input.accurateTop !== null) {
    const accounted = new Set([...input.included, ...result.map((e) => e.memory_id)])
    input.accurateTop.forEach((id, i) => {
      if (accounted.has(id)) return
      result.push({
        memory_id: id,
        reason: "engine_budget",
        detail: `rank ${i + 1} in accurate mode; fast mode skips neighbour expansion and the entity, speaker and date stages`
      })
    })
  }
  return result
}
