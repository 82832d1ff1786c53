/**
 * People, places, organisations and salient proper nouns, found with
 * compromise, and their canonical form: one key per name, whatever its case,
 * possessive or accents, so "Caroline", "Caroline's" and "caroline" are one
 * entity of the graph.
 */
import type compromise from "compromise"
import { createRequire } from "node:module"

const requireCjs = createRequire(import.meta.url)
let loadedNlp: typeof compromise | undefined
/** compromise, loaded on first use (about 0.3 s and 15 MB of start-up otherwise): its CommonJS build, read synchronously. */
const nlp = (text: string) => {
  if (loadedNlp === undefined) {
    const loaded: typeof compromise = requireCjs("compromise")
    loadedNlp = loaded
  }
  return loadedNlp(text)
}

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

/** A one-word "proper noun" that is only a capitalised common word, or a calendar word. */
const isCommonWord = (name: string) => {
  if (CALENDAR.has(entityKey(name))) return true
  if (/\s/.test(name) || /^[A-Z0-9]{2,}$/.test(name)) return false
  const lower = nlp(name.toLowerCase())
  return !lower.has("#ProperNoun") && lower.has(COMMON_WORD)
}

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
  const doc = nlp(text)
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
  for (const name of doc.people().out("array") as Array<string>) add(name, "person")
  for (const name of doc.places().out("array") as Array<string>) add(name, "place")
  for (const name of doc.organizations().out("array") as Array<string>) add(name, "organization")
  for (const name of doc.match("#ProperNoun+").out("array") as Array<string>) add(name, "thing")
  for (const acronym of text.match(/\b[A-Z]{2,}[A-Z+]*\b/g) ?? []) add(acronym, "thing")
  return [...found.values()]
}
