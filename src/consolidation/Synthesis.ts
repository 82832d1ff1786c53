/**
 * The offline engine's writing: a note says what its facts say, nothing more.
 * Facts in the order they happened, each with its date, near-duplicates said
 * once (the latest wording); a changed attribute is stated as its current
 * value, when it changed, and what it was before. Summaries list the notes of
 * a subject or an entity, one line each.
 */
import { spanLabel } from "../domain/EventLabel.ts"
import type { Memory } from "../domain/Memory.ts"
import { isStopword, words } from "../retrieval/Text.ts"
import { PLEASANTRY } from "./Sentences.ts"
import { PHRASES, type AttributeValue } from "./Attributes.ts"
import type { FactView } from "./Facts.ts"

const normalised = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim()

const jaccard = (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
  if (a.size === 0 && b.size === 0) return 1
  let shared = 0
  for (const t of a) if (b.has(t)) shared++
  return shared / (a.size + b.size - shared)
}

/** Facts said once: of near-duplicates (same words, or nearly all), the latest stays. */
export const distinct = (facts: ReadonlyArray<FactView>): ReadonlyArray<FactView> => {
  const ordered = [...facts].sort((a, b) => a.time - b.time || a.memory.position - b.memory.position)
  const kept: Array<FactView> = []
  for (const fact of ordered) {
    const twin = kept.findIndex((k) => normalised(k.memory.text) === normalised(fact.memory.text) || jaccard(k.terms, fact.terms) >= 0.8)
    if (twin >= 0) kept.splice(twin, 1)
    kept.push(fact)
  }
  return kept.sort((a, b) => a.time - b.time || a.memory.position - b.memory.position)
}

/** What a fact says, as a sentence: its informative sentences (the whole text when it has none). */
const sentence = (fact: FactView) => {
  const text = (fact.gist === "" ? fact.memory.text : fact.gist).trim()
  return /[.!?…]$/.test(text) ? text : `${text}.`
}

/** A note from its facts, about its subject (named once), each fact dated, in the order they happened. */
export const noteText = (facts: ReadonlyArray<FactView>) => {
  const subject = facts[0]?.subject
  const body = distinct(facts).map((fact) => `(${fact.when}) ${sentence(fact)}`).join(" ")
  return subject ? `${subject}: ${body}` : body
}

/** A changed attribute: the current value and since when, then what it was before, newest first. */
export const changeText = (
  subject: string,
  attribute: AttributeValue["name"],
  values: ReadonlyArray<{ readonly value: string; readonly time: number; readonly when: string }>
) => {
  const newestFirst = [...values].sort((a, b) => b.time - a.time)
  const [current, ...before] = newestFirst
  const earlier = before.map((v) => `${v.value} (${v.when})`).join(", then before that ")
  return `${subject} ${PHRASES[attribute]} ${current!.value}, since ${current!.when}.` +
    (before.length > 0 ? ` Before that: ${earlier}.` : "")
}

const FIRST_WORDS = 14

const gist = (note: Memory) => {
  const withoutDate = note.text.replace(/^\([^()]{1,40}\)\s*/, "")
  const words = withoutDate.split(/\s+/)
  return words.length <= FIRST_WORDS ? withoutDate.replace(/[.!?…]+$/, "") : `${words.slice(0, FIRST_WORDS).join(" ")}…`
}

/** Up to this many notes, a summary names each; past it, it says what they are mostly about. */
export const LISTED_NOTES = 8
/** The words a summary of many notes names, at most. */
const TOPICS = 6
const MONTH_WORDS = new Set(["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
  "november", "december"])
/** Words any note may use, which name no topic: common verbs and their forms, and vague nouns and adverbs. */
const GENERIC = new Set(("make made makes making like likes liked will going gonna give gives gave giving take takes took taking " +
  "come comes came coming want wants wanted need needs needed know knows knew think thinks thought feel feels felt keep keeps kept " +
  "said says tell told shares shared share sharing went goes doing done getting gets been since thing things stuff time times " +
  "ways there sure right well much many more most every always never something anything everything someone anyone everyone " +
  "lately today tonight yesterday tomorrow week weeks month months year years day days still even ever back soon later").split(" "))

type NoteWord = { readonly word: string; readonly spelling: string }
/** A note's words, per memory object (immutable): every run weighs all the space's notes, most of them unchanged. */
const wordsOfNotes = new WeakMap<Memory, ReadonlyArray<NoteWord>>()

/**
 * The words of a note a summary may name, each with its spelling: not its
 * subject's label nor its dates, not stopwords, pleasantries, month names,
 * generic words or words under four letters; a possessive counts as its name.
 */
export const noteWords = (note: Memory): ReadonlyArray<NoteWord> => {
  let known = wordsOfNotes.get(note)
  if (known === undefined) wordsOfNotes.set(note, (known = readNoteWords(note.text)))
  return known
}

const readNoteWords = (noteText: string): ReadonlyArray<NoteWord> => {
  const text = noteText.replace(/^[^:]{1,40}:\s+/, "").replace(/\([^()]{1,40}\)/g, " ")
  const out: Array<{ word: string; spelling: string }> = []
  for (const token of text.match(/\p{L}[\p{L}'’-]*/gu) ?? []) {
    const spelling = token.replace(/['’]s$/u, "")
    const word = spelling.toLowerCase()
    if (word.length < 4 || isStopword(word) || PLEASANTRY.has(word) || MONTH_WORDS.has(word) || GENERIC.has(word)) continue
    out.push({ word, spelling })
  }
  return out
}

/**
 * The words that come back across the notes: by how many notes use them,
 * weighed by how telling each is (`weightOf`); not the subject's own name nor
 * `names` (who the space's notes are by), nor a word most of the notes carry
 * (it tells them nothing apart). Each in its most used spelling.
 */
const topicsOf = (about: string, notes: ReadonlyArray<Memory>, names: ReadonlySet<string>, weightOf: (word: string) => number) => {
  const own = new Set([...words(about), ...names])
  const found = new Map<string, { notes: number; first: number; spellings: Map<string, number> }>()
  notes.forEach((note, i) => {
    const inNote = new Set<string>()
    for (const { spelling, word } of noteWords(note)) {
      if (own.has(word)) continue
      let entry = found.get(word)
      if (!entry) found.set(word, (entry = { notes: 0, first: i, spellings: new Map() }))
      entry.spellings.set(spelling, (entry.spellings.get(spelling) ?? 0) + 1)
      inNote.add(word)
    }
    for (const word of inNote) found.get(word)!.notes++
  })
  return [...found.entries()]
    .filter(([, entry]) => entry.notes >= 2 && entry.notes <= notes.length * 0.6)
    .map(([word, entry]) => ({ ...entry, score: entry.notes * weightOf(word) }))
    .sort((a, b) => b.score - a.score || b.notes - a.notes || a.first - b.first)
    .slice(0, TOPICS)
    .map((entry) => ({ word: [...entry.spellings].sort((a, b) => b[1] - a[1])[0]![0], notes: entry.notes }))
}

const earliest = (notes: ReadonlyArray<Memory>) => new Date(Math.min(...notes.map((n) => (n.occurredStart ?? n.eventTime).getTime())))
const latest = (notes: ReadonlyArray<Memory>) =>
  new Date(Math.max(...notes.map((n) => (n.occurredEnd ?? n.occurredStart ?? n.eventTime).getTime())))

/**
 * A broad pattern: what the notes about one subject, or mentioning one
 * entity, are about. A few notes are each named by their first words; many
 * are described by when they span and the words that come back across them,
 * with in how many notes. Every word comes from the notes.
 */
export const summaryText = (
  about: string,
  notes: ReadonlyArray<Memory>,
  names: ReadonlySet<string> = new Set(),
  /** How telling a word is across the space's notes (rare weighs more); every word alike by default. */
  weightOf: (word: string) => number = () => 1
) => {
  if (notes.length <= LISTED_NOTES) return `${about}, across ${notes.length} notes: ${notes.map(gist).join("; ")}.`
  const topics = topicsOf(about, notes, names, weightOf)
  return `${about}, across ${notes.length} notes (${spanLabel(earliest(notes), latest(notes))})` +
    (topics.length > 0 ? `, most about ${topics.map((t) => `${t.word} (${t.notes})`).join(", ")}` : "") + "."
}
