/**
 * Which memories a recall may see (strict scope, tags, type, state, as_of) and,
 * of the ranked ones, which it returns and why the others were dropped, in the
 * documented order: dedup, min_score, limit.
 */
import type { Recall, Exclusion } from "../domain/SpaceProtocol.ts"
import type { TagsMatch } from "../domain/Memories.ts"
import type { Memory } from "../domain/Memory.ts"

/** What a recall's filters read of a memory: never its words. */
export type Filtered = Pick<Memory, "type" | "userId" | "agentId" | "sessionId" | "tags" | "createdAt">

// Plain loops, no per-call sets or closures: a recall checks every candidate memory, and a memory has a few tags.
const holdsAny = (memoryTags: ReadonlyArray<string>, wanted: ReadonlyArray<string>) => {
  for (const tag of wanted) if (memoryTags.includes(tag)) return true
  return false
}

const holdsAll = (memoryTags: ReadonlyArray<string>, wanted: ReadonlyArray<string>) => {
  for (const tag of wanted) if (!memoryTags.includes(tag)) return false
  return true
}

/**
 * Tag modes: `any` / `all` also admit untagged memories; `any_strict` /
 * `all_strict` need at least one / every requested tag; `exact` needs the same set.
 */
export const tagsAdmit = (memoryTags: ReadonlyArray<string>, wanted: ReadonlyArray<string> | null, mode: TagsMatch) => {
  if (wanted === null || wanted.length === 0) return true
  switch (mode) {
    case "any":
      return memoryTags.length === 0 || holdsAny(memoryTags, wanted)
    case "all":
      return memoryTags.length === 0 || holdsAll(memoryTags, wanted)
    case "any_strict":
      return holdsAny(memoryTags, wanted)
    case "all_strict":
      return holdsAll(memoryTags, wanted)
    case "exact":
      return new Set(memoryTags).size === new Set(wanted).size && holdsAll(memoryTags, wanted)
  }
}

/** Strict scope: a scoped recall sees only memories written under the same scope; an unscoped one sees all. */
const scopeAdmits = (value: string | null, wanted: string | null) => wanted === null || value === wanted

/**
 * The recall's filters beyond the state (scope, tags, type, as_of), or
 * undefined when it sets none and so admits every active memory: the index
 * then skips the per-memory check.
 */
export const narrowing = (recall: Recall): ((memory: Filtered) => boolean) | undefined => {
  const asOf = recall.asOf === null ? null : Date.parse(recall.asOf)
  const types = recall.memoryTypes === null || recall.memoryTypes.length === 0 ? null : new Set(recall.memoryTypes)
  const tagged = recall.tags !== null && recall.tags.length > 0
  if (types === null && recall.userId === null && recall.agentId === null && recall.sessionId === null && !tagged && asOf === null) {
    return undefined
  }
  return (memory: Filtered) =>
    (types === null || types.has(memory.type)) &&
    scopeAdmits(memory.userId, recall.userId) &&
    scopeAdmits(memory.agentId, recall.agentId) &&
    scopeAdmits(memory.sessionId, recall.sessionId) &&
    tagsAdmit(memory.tags, recall.tags, recall.tagsMatch) &&
    (asOf === null || memory.createdAt.getTime() <= asOf)
}

export interface Scored {
  readonly id: string
  readonly score: number
}

/**
 * Of the ranked memories, the ones returned. With `preferObservations`, a
 * ranked note (or experience, or summary) stands in for the facts behind it only when it
 * serves the query at least as well: it ranks at or above each of them for
 * this query, and it gives at least as much score per token as they do
 * together (a fact ranked below the candidates counts at the lowest
 * candidate's score). The facts it stands in for are reported as `dedup`,
 * naming the note and why; otherwise the facts keep their places and the
 * note, which would only say them again in more words, is the one reported
 * as `dedup`. A fact is never dropped for a note that ranks below it.
 *
 * A note that stays ranks no higher than the best of its facts would for this
 * query (an unranked fact counts at the lowest candidate's score): it says
 * again what they say, so words it adds around them (the dates it labels them
 * with, its other facts' words) do not lift it above facts that answer the
 * query better. Measured (`bench:locomo --consolidate`, 2026-11-29): a note
 * labelled "(15 April 2022)" ranked fourth for "What physical transformation
 * did Nate undergo in April 2022?" though its two facts were not among the
 * first 23, and pushed an evidence fact out of a 1,000-token block.
 */
export const select = (
  ranked: ReadonlyArray<Scored>,
  /** A ranked memory's type. */
  typeOf: (id: string) => Memory["type"] | undefined,
  recall: Recall,
  /** The facts a synthesis was made from, those still there; undefined for a fact. */
  sourcesOf: (id: string) => ReadonlyArray<string> | undefined = () => undefined,
  /** A memory's length in tokens, when known (a space still reading its texts after a wake does not know it). */
  tokensOf: (id: string) => number | undefined = () => undefined
): { included: ReadonlyArray<Scored>; excluded: ReadonlyArray<Exclusion> } => {
  const excluded: Array<Exclusion> = []
  let kept: ReadonlyArray<Scored> = ranked
  // Only where the recall may return facts: a recall of notes alone has nothing to weigh them against.
  const factsSeen = recall.memoryTypes === null || recall.memoryTypes.length === 0 || recall.memoryTypes.includes("fact")
  if (recall.preferObservations && factsSeen) {
    const scoreOf = new Map<string, number>()
    let floor = Number.POSITIVE_INFINITY
    for (const hit of ranked) {
      if (!scoreOf.has(hit.id)) scoreOf.set(hit.id, hit.score)
      floor = Math.min(floor, hit.score)
    }
    const dropped = new Set<string>()
    // A note says again what its facts say: it ranks no higher for this query than the best of them would.
    const capOf = new Map<string, number>()
    for (const hit of ranked) {
      if (dropped.has(hit.id) || typeOf(hit.id) === "fact") continue
      const sources = sourcesOf(hit.id)
      if (sources === undefined || sources.length === 0) continue
      capOf.set(hit.id, sources.reduce((max, id) => Math.max(max, scoreOf.get(id) ?? floor), Number.NEGATIVE_INFINITY))
      const rankedFacts = sources.filter((id) => scoreOf.has(id) && !dropped.has(id))
      const best = rankedFacts.reduce((max, id) => Math.max(max, scoreOf.get(id)!), Number.NEGATIVE_INFINITY)
      const noteTokens = tokensOf(hit.id)
      const factTokens = sources.reduce((sum, id) => sum + (tokensOf(id) ?? Number.NaN), 0)
      const factScore = sources.reduce((sum, id) => sum + (scoreOf.get(id) ?? floor), 0)
      const measured = noteTokens !== undefined && !Number.isNaN(factTokens) && factTokens > 0
      const ranks = hit.score >= best
      // Per token: the note's score over its length against its facts' over theirs (unknown lengths: the ranks decide).
      const denser = !measured || hit.score * factTokens >= factScore * noteTokens
      const lengths = measured ? ` in ${noteTokens} tokens for the ${factTokens} of its ${sources.length} facts` : ""
      if (ranks && denser) {
        const why = rankedFacts.length === 0 ? "" : `covered by ${hit.id}, which ranks at or above it (score ${hit.score.toFixed(4)} against ` +
          `${best.toFixed(4)})${lengths}`
        for (const id of rankedFacts) {
          dropped.add(id)
          excluded.push({ memory_id: id, reason: "dedup", detail: why })
        }
      } else {
        dropped.add(hit.id)
        excluded.push({
          memory_id: hit.id,
          reason: "dedup",
          detail: ranks
            ? `its ${sources.length} facts serve this query better per token (score ${hit.score.toFixed(4)}${lengths})`
            : `its facts rank above it for this query (score ${hit.score.toFixed(4)} against ${best.toFixed(4)})`
        })
      }
    }
    const placed = new Set<string>()
    const out: Array<Scored> = []
    for (const hit of ranked) {
      if (dropped.has(hit.id) || placed.has(hit.id)) continue
      placed.add(hit.id)
      const cap = capOf.get(hit.id) ?? Number.POSITIVE_INFINITY
      out.push(hit.score > cap ? { id: hit.id, score: cap } : hit)
    }
    // Stable: a note capped at its best fact's score comes right after memories of that score.
    kept = out.sort((a, b) => b.score - a.score)
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
