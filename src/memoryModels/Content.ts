/**
 * What a memory model says: its standing question answered, in markdown,
 * from the memories recalled for it and nothing else. Pure, so the rules can
 * be read (and tested) in one place; the refresh loop chooses the engine.
 *
 * The local engine is extractive: each line is a recalled memory, with its
 * date, best first, while the whole fits in max_tokens. A catalog model
 * writes prose from a prompt built here, and must finish within max_tokens.
 */
import { eventIso } from "../domain/EventLabel.ts"
import { estimateTokens } from "../../services/llm/Provider.ts"
import { onlyAsks, terms } from "../retrieval/Text.ts"
import { describeDisposition } from "../reason/Prompt.ts"
import type { StoredSpaceProfile } from "../domain/Profiles.ts"
import { escapeRecalled, fence, frameChars } from "../security/Fence.ts"

export interface Source {
  readonly memory_id: string
  readonly content: string
  readonly memory_type: string
  readonly occurred_start: string | null
  readonly occurred_end: string | null
  readonly created_at: string
  readonly relevance_score: number | null
}

/** The answer when nothing recalled bears on the question (content is never an empty string). */
export const NOTHING_YET = "_No memories answer this yet._"

/** A recalled memory counts when it shares a telling word with the question or ranks close to the best. */
const NEAR_BEST = 0.5

/** When a memory's event happened, as precisely as the memory knows it (ISO 8601: a day, a month, a year or an interval). */
const when = (source: Source) =>
  source.occurred_start === null
    ? eventIso(new Date(source.created_at), null)
    : eventIso(new Date(source.occurred_start), source.occurred_end === null ? null : new Date(source.occurred_end))

export const line = (source: Source) => `- ${source.content.replace(/\s*\n\s*/g, " ").trim()} (${when(source)})`

/**
 * The question's telling words: among three or more recalled memories, those
 * not found in most of them (a subject's name every memory carries tells
 * nothing apart). A question made only of such words keeps them all.
 */
const tellingTerms = (query: string, sources: ReadonlyArray<Source>) => {
  const asked = [...new Set(terms(query))]
  const perSource = sources.map((s) => new Set(terms(s.content)))
  if (perSource.length < 3) return new Set(asked)
  const telling = asked.filter((t) => perSource.filter((words) => words.has(t)).length * 2 <= perSource.length)
  return new Set(telling.length === 0 ? asked : telling)
}

/** The memories that bear on the question, in rank order, each text once; none that only asks (`onlyAsks`). */
export const relevant = (query: string, sources: ReadonlyArray<Source>): ReadonlyArray<Source> => {
  const wanted = tellingTerms(query, sources)
  const best = Math.max(0, ...sources.map((s) => s.relevance_score ?? 0))
  const seen = new Set<string>()
  return sources.filter((source) => {
    const key = source.content.trim().toLowerCase()
    if (seen.has(key) || onlyAsks(source.content)) return false
    const shares = terms(source.content).some((t) => wanted.has(t))
    const near = best > 0 && (source.relevance_score ?? 0) >= best * NEAR_BEST
    if (!shares && !near) return false
    seen.add(key)
    return true
  })
}

/** Lines under the model's name while the whole stays within `maxTokens`; whole lines only, earliest kept. */
const fit = (name: string, lines: ReadonlyArray<string>, maxTokens: number) => {
  const heading = `## ${name}`
  let text = heading
  for (const next of lines) {
    const candidate = `${text}\n${next}`
    if (estimateTokens(candidate) > maxTokens) break
    text = candidate
  }
  return text === heading ? `${heading}\n${NOTHING_YET}` : text
}

/** A full answer by the local engine. */
export const localFull = (model: { name: string; query: string; maxTokens: number }, sources: ReadonlyArray<Source>) =>
  fit(model.name, relevant(model.query, sources).map(line), model.maxTokens)

/** The bulleted lines of an answer this engine wrote (its heading and placeholder are not lines). */
const linesOf = (content: string) => content.split("\n").filter((l) => l.startsWith("- "))

/**
 * An edit in place by the local engine: the lines of the memories that bear
 * on the question and were recorded after `since` come first (the newest
 * news), then what the answer said before; the oldest lines give way when the
 * whole no longer fits. Relevance is judged among everything recalled, so a
 * single new memory is held to the same bar as in a full refresh.
 */
export const localDelta = (
  model: { name: string; query: string; maxTokens: number },
  previous: string,
  recalled: ReadonlyArray<Source>,
  since: number
) => {
  const before = linesOf(previous)
  const added = relevant(model.query, recalled)
    .filter((s) => Date.parse(s.created_at) > since)
    .map(line)
    .filter((l) => !before.includes(l))
  return fit(model.name, [...added, ...before], model.maxTokens)
}

/**
 * The memories a catalog model is given, numbered best first, each with its
 * date, as a fenced section of data (src/security/Fence.ts) that stays,
 * frame included, within `budget` tokens.
 */
export const memoryBlock = (sources: ReadonlyArray<Source>, budget: number, boundary: string) => {
  const kept: Array<Source> = []
  const lines: Array<string> = []
  const frame = frameChars("relevance")
  let chars = 0
  for (const source of sources) {
    const next = `${kept.length + 1}. (${when(source)}) ${escapeRecalled(source.content)}`
    const length = lines.length === 0 ? next.length : chars + 1 + next.length
    if (Math.ceil((frame + length) / 4) > budget) break
    kept.push(source)
    lines.push(next)
    chars = length
  }
  return { block: fence(lines, "relevance", boundary), kept }
}

export interface PromptInput {
  readonly spaceName: string
  readonly profile: StoredSpaceProfile
  readonly name: string
  readonly maxTokens: number
  /** The fenced memory section, best first; empty when nothing was recalled. */
  readonly block: string
}

/** Asks for somewhat less than the ceiling, so an answer that ends well is not cut off by it. */
const target = (maxTokens: number) => Math.floor(maxTokens * 0.8)

const rules = (input: PromptInput) => [
  `You maintain "${input.name}", a standing answer kept in the long-term memory of the space "${input.spaceName}".`,
  ...(input.profile.mission.trim() === "" ? [] : [`Mission of this space: ${input.profile.mission.trim()}`]),
  "Disposition:",
  ...describeDisposition(input.profile.disposition).map((l) => `- ${l}`),
  `Write in markdown, at most about ${target(input.maxTokens)} tokens. Use only what the memories below state;`,
  "never invent, and say plainly what they do not answer. Do not mention memory numbers."
]

/** A full answer by a catalog model: the standing question is the user's message. */
export const fullPrompt = (input: PromptInput) =>
  [...rules(input), "", input.block === "" ? "Memories: none were recalled." : input.block].join("\n")

/** An edit in place by a catalog model: the current answer, and the memories recorded since it was written. */
export const deltaPrompt = (input: PromptInput, previous: string) =>
  [
    ...rules(input),
    "The current answer follows. Edit it in place with what the new memories add or change, keep what still holds,",
    "and reply with the whole updated answer only.",
    "",
    `Current answer:\n${previous}`,
    "",
    input.block === "" ? "New memories: none." : `New memories since the current answer was written:\n${input.block}`
  ].join("\n")
