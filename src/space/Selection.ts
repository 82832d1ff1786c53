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
 * fact behind a note the recall may see is replaced by that note, which takes
 * the place of its best-ranked fact (a note is recalled where its evidence
 * is); the facts are reported as `dedup`, naming the note.
 */
export const select = (
  ranked: ReadonlyArray<Scored>,
  /** A ranked memory's type. */
  typeOf: (id: string) => Memory["type"] | undefined,
  recall: Recall,
  /** The note (or other synthesis) a fact is behind, when the recall may see it. */
  coveringNote: (factId: string) => Pick<Memory, "id"> | undefined = () => undefined
): { included: ReadonlyArray<Scored>; excluded: ReadonlyArray<Exclusion> } => {
  const excluded: Array<Exclusion> = []
  let kept: ReadonlyArray<Scored> = ranked
  if (recall.preferObservations) {
    const placed = new Set<string>()
    const out: Array<Scored> = []
    for (const hit of ranked) {
      const note = typeOf(hit.id) === "fact" ? coveringNote(hit.id) : undefined
      if (note !== undefined) {
        excluded.push({ memory_id: hit.id, reason: "dedup", detail: `covered by ${note.id}` })
        if (!placed.has(note.id)) {
          placed.add(note.id)
          out.push({ id: note.id, score: hit.score })
        }
        continue
      }
      if (placed.has(hit.id)) continue
      placed.add(hit.id)
      out.push(hit)
    }
    kept = out
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
