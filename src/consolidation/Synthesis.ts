/**
 * The offline engine's writing: a note says what its facts say, nothing more.
 * Facts in the order they happened, each with its date, near-duplicates said
 * once (the latest wording); a changed attribute is stated as its current
 * value, when it changed, and what it was before. Summaries list the notes of
 * a subject or an entity, one line each.
 */
import type { Memory } from "../domain/Memory.ts"
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

/** A broad pattern: what the notes about one subject, or mentioning one entity, are about. */
export const summaryText = (about: string, notes: ReadonlyArray<Memory>) =>
  `${about}, across ${notes.length} notes: ${notes.map(gist).join("; ")}.`
