/**
 * People, places, organisations and salient proper nouns, found with
 * compromise, and their canonical form: one key per name, whatever its case,
 * possessive or accents, so "Caroline", "Caroline's" and "caroline" are one
 * entity of the graph.
 */
import { nlp, parseNames } from "./NameSentences.ts"

export type EntityKind = "person" | "place" | "organization" | "thing"

export interface Entity {
  readonly name: string
  readonly kind: EntityKind
}

const clean = (name: string) => name.replace(/[’']s?$/i, "").replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").trim()

const MONTHS = "january february march april may june july august september october november december"
const WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
/** Calendar words are dates, not entities (dates are kept as event times). */
const CALENDAR = new Set(`${MONTHS} ${WEEKDAYS} jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun`.split(" "))

/** Tags of the common word a capitalised sentence opener ("From", "Honestly", "Thanks") really is. */
const COMMON_WORD = "#Preposition|#Determiner|#Conjunction|#Pronoun|#Adverb|#Adjective|#Verb|#Expression|#QuestionWord|#Date|#Value|#Modal"

/**
 * The canonical key of a name: accents folded, lower case, no possessive, no
 * leading article, punctuation as single spaces. Two names with one key are
 * one entity.
 */
export const entityKey = (name: string) =>
  name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
    .replace(/[’']s?$/u, "")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .replace(/^the /, "")

/** Answers of `isCommonWord` by lower-cased word: the same few words come back in every text. */
const commonWords = new Map<string, boolean>()

/** A one-word "proper noun" that is only a capitalised common word, or a calendar word. */
const isCommonWord = (name: string) => {
  if (CALENDAR.has(entityKey(name))) return true
  if (/\s/.test(name) || /^[A-Z0-9]{2,}$/.test(name)) return false
  const word = name.toLowerCase()
  let common = commonWords.get(word)
  if (common === undefined) {
    const lower = nlp()(word)
    common = !lower.has("#ProperNoun") && lower.has(COMMON_WORD)
    if (commonWords.size >= 10_000) commonWords.clear()
    commonWords.set(word, common)
  }
  return common
}

/** compromise's `out("array")`, typed. */
const strings = (out: unknown): Array<string> =>
  Array.isArray(out) ? out.filter((s): s is string => typeof s === "string") : []

/** A calendar word at either end of a run of names ("January Nate") is a date beside a name, not part of it. */
const trimCalendar = (name: string) => {
  const words = name.split(/\s+/)
  while (words.length > 1 && CALENDAR.has(entityKey(words[0]!))) words.shift()
  while (words.length > 1 && CALENDAR.has(entityKey(words[words.length - 1]!))) words.pop()
  return words.join(" ")
}

/**
 * The entities of a text. `speaker` (a name written before the turn, as in
 * "Caroline: ...") is one of them; scope ids (`exclude`: the write's
 * user_id, agent_id and session_id) never are.
 */
export const extractEntities = (text: string, speaker: string | null, exclude: ReadonlyArray<string> = []): Array<Entity> => {
  const found = new Map<string, Entity>()
  const excluded = new Set(exclude.map(entityKey))
  const add = (raw: string, kind: EntityKind) => {
    // A run of proper nouns across punctuation ("Awesome, Jon") is several names, or none.
    for (const part of raw.split(/[,;:!?()"“”]+/)) {
      const cleaned = trimCalendar(clean(part))
      if (cleaned.length < 2 || /^(I|Me|My)$/i.test(cleaned)) continue
      const key = entityKey(cleaned)
      if (key.length < 2 || excluded.has(key) || found.has(key)) continue
      if (kind === "thing" && isCommonWord(cleaned)) continue
      if (CALENDAR.has(key)) continue
      found.set(key, { name: cleaned, kind })
    }
  }
  if (speaker) add(speaker, "person")
  const doc = parseNames(text)
  if (doc !== undefined) {
    for (const name of strings(doc.people().out("array"))) add(name, "person")
    for (const name of strings(doc.places().out("array"))) add(name, "place")
    for (const name of strings(doc.organizations().out("array"))) add(name, "organization")
    for (const name of strings(doc.match("#ProperNoun+").out("array"))) add(name, "thing")
  }
  for (const acronym of text.match(/\b[A-Z]{2,}[A-Z+]*\b/g) ?? []) add(acronym, "thing")
  return [...found.values()]
}
