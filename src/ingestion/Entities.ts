/**
 * People, places, organisations and salient proper nouns, found with
 * compromise, and their canonical form: one key per name, whatever its case,
 * possessive or accents, so "Caroline", "Caroline's" and "caroline" are one
 * entity of the graph.
 */
import { nlp, parseNames } from "./NameSentences.ts"
import { nameRuns } from "./NameRuns.ts"
import { escapeRegExp, mentions } from "./Patterns.ts"

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

/**
 * Tags of the common word a capitalised sentence opener ("From", "Honestly", "Thanks", "Our") really is, as one
 * compromise match: an alternation needs its parentheses, or only the first tag is tried.
 */
const COMMON_WORD = "(#Preposition|#Determiner|#Conjunction|#Pronoun|#Possessive|#Adverb|#Adjective|#Verb|#Expression|#QuestionWord|#Date|#Value|#Modal)"

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

/**
 * Whether compromise knows the word rather than guessing its tag from its ending ("Sigrid" an adjective, as
 * "rigid"; "Tilly" an adverb, as "silly"). An interjection ("hmm") is sure enough, and so is an adverb made of an
 * adjective it knows ("Honestly": "honest").
 */
const knownWord = (parsed: ReturnType<ReturnType<typeof nlp>>, word: string) => {
  if (parsed.confidence() >= 1 || parsed.has("#Expression")) return true
  const base = /(?:[^i]ly|ily)$/.test(word) ? word.replace(/ily$/, "y").replace(/ly$/, "") : null
  if (base === null || !parsed.has("#Adverb")) return false
  const adjective = nlp()(base)
  return adjective.confidence() >= 1 && adjective.has("#Adjective")
}

/**
 * A one-word "proper noun" that is only a capitalised common word, or a calendar word; in capitals, only a chat
 * expression ("OK", "BTW", "LOL"), since most words in capitals are acronyms that name something.
 */
const isCommonWord = (name: string) => {
  if (CALENDAR.has(entityKey(name))) return true
  if (/\s/.test(name)) return false
  const capitals = /^[A-Z0-9]{2,}$/.test(name)
  const word = name.toLowerCase()
  const key = capitals ? `${word}!` : word
  let common = commonWords.get(key)
  if (common === undefined) {
    const lower = nlp()(word)
    common = knownWord(lower, word) && !lower.has("#ProperNoun") && lower.has(capitals ? "#Expression" : COMMON_WORD)
    if (commonWords.size >= 10_000) commonWords.clear()
    commonWords.set(key, common)
  }
  return common
}

/** Answers of `isCommonNoun` by lower-cased word. */
const commonNouns = new Map<string, boolean>()

/** A word compromise knows as a common noun and never as a name ("way", "summer"; not "grace", "paris"). */
const isCommonNoun = (word: string) => {
  let common = commonNouns.get(word)
  if (common === undefined) {
    const parsed = nlp()(word)
    common = parsed.confidence() >= 1 && parsed.has("#Noun") && !parsed.has("(#ProperNoun|#Person|#Place|#Organization)")
    if (commonNouns.size >= 10_000) commonNouns.clear()
    commonNouns.set(word, common)
  }
  return common
}

/**
 * A one-word "proper noun" that is a common noun capitalised only because it
 * opens a sentence ("Way to go, John!"): every time the text has it, it
 * stands first in the text or after a sentence's end or a speaker's colon.
 */
const commonNounOpener = (name: string, text: string) => {
  if (/\s/.test(name) || !isCommonNoun(name.toLowerCase())) return false
  const anywhere = mentions(text, name)
  const opening = text.match(new RegExp(`(?:^|[.!?:…]["')\\]]*\\s+)${escapeRegExp(name)}(?![\\p{L}\\p{N}])`, "gu"))?.length ?? 0
  return anywhere > 0 && opening === anywhere
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

/** Lower-case words that belong inside a name ("Vincent van Gogh", "Leonardo da Vinci"). */
const PARTICLES = new Set("van von de da del della di du la le den der ter ten bin ibn al el".split(" "))

/**
 * A name without the common words compromise read into it at either end:
 * "sister Anjali" is Anjali, "Dr. Lee" stays (capitalised), "Apple iPhone"
 * stays (a word with a capital inside is part of a name).
 */
const trimCommonEnds = (name: string) => {
  const words = name.split(/\s+/)
  if (!words.some((word) => /^\p{Lu}/u.test(word))) return name
  const common = (word: string) => /^\p{Ll}+$/u.test(word) && !PARTICLES.has(word)
  while (words.length > 1 && common(words[0]!)) words.shift()
  while (words.length > 1 && common(words[words.length - 1]!)) words.pop()
  return words.join(" ")
}

/** A scope id or speaker that is a person's name ("marta", "Ana Lima"), not an identifier ("user_8812", "u-1") or a role. */
const NAME_LIKE = /^\p{L}[\p{L}'’.-]*(?: \p{L}[\p{L}'’.-]*){0,3}$/u
const ROLE = /^(?:user|users|assistant|system|human|ai|bot|agent|model|customer|client|me|you|default|anonymous|guest|admin)$/i

/**
 * Of a write's scope ids (and a speaker given beside its content), those that
 * are identifiers and never entities. A name is kept: a user whose id is
 * "marta" is the Marta her facts name ("I'm allergic to peanuts" is stored as
 * "Marta is allergic to peanuts"), and the graph must show her.
 */
export const opaqueIds = (ids: ReadonlyArray<string>): Array<string> =>
  ids.filter((id) => !NAME_LIKE.test(id.trim()) || ROLE.test(id.trim()))

/**
 * The entities of a text. `speaker` (a name written before the turn, as in
 * "Caroline: ...") is one of them; the names in `exclude` (the write's scope
 * ids that are identifiers, `opaqueIds`) never are.
 */
export const extractEntities = (text: string, speaker: string | null, exclude: ReadonlyArray<string> = []): Array<Entity> => {
  const found = new Map<string, Entity>()
  const excluded = new Set(exclude.map(entityKey))
  const add = (raw: string, kind: EntityKind) => {
    // A run of proper nouns across punctuation ("Awesome, Jon") is several names, or none.
    for (const part of raw.split(/[,;:!?()"“”]+/)) {
      const cleaned = trimCommonEnds(trimCalendar(clean(part)))
      if (cleaned.length < 2 || /^(I|Me|My)$/i.test(cleaned)) continue
      const key = entityKey(cleaned)
      if (key.length < 2 || excluded.has(key) || found.has(key)) continue
      if (kind === "thing" && (isCommonWord(cleaned) || commonNounOpener(cleaned, text))) continue
      if (CALENDAR.has(key)) continue
      found.set(key, { name: cleaned, kind })
    }
  }
  if (speaker) add(speaker, "person")
  const doc = parseNames(text)
  if (doc !== undefined) {
    // Read off the tagged terms in one walk (NameRuns); compromise's own matchers when the text needs their rules.
    const found = nameRuns(doc.document) ?? {
      people: strings(doc.people().out("array")),
      places: strings(doc.places().out("array")),
      organizations: strings(doc.organizations().out("array")),
      proper: strings(doc.match("#ProperNoun+").out("array"))
    }
    for (const name of found.people) add(name, "person")
    for (const name of found.places) add(name, "place")
    for (const name of found.organizations) add(name, "organization")
    for (const name of found.proper) add(name, "thing")
  }
  for (const acronym of text.match(/\b[A-Z]{2,}[A-Z+]*\b/g) ?? []) add(acronym, "thing")
  return withoutInnerNames([...found.values()], text)
}

/**
 * Names found only inside a longer name of the same text are that name's
 * words, not names of their own: "Riverside" of "the Riverside Runners" goes,
 * "Tom" stays where the text also says "Tom" alone ("Tom Baker ... Tom said").
 */
const withoutInnerNames = (entities: Array<Entity>, text: string) => {
  const longer = entities.filter((e) => /\s/.test(e.name))
  if (longer.length === 0) return entities
  return entities.filter((entity) => {
    const outer = longer.filter((l) => l !== entity && mentions(l.name, entity.name) > 0)
    if (outer.length === 0) return true
    // Every mention of it in the text is inside one of the longer names.
    return mentions(text, entity.name) > outer.reduce((n, l) => n + mentions(text, l.name), 0)
  })
}
