/**
 * What consolidation reads off a memory: whose it is (scope), who or what it
 * is about (subject), whether it is the agent's own experience, and its
 * content terms (stemmed, stopwords and the subject's own name left out).
 */
import { eventLabel } from "../domain/EventLabel.ts"
import type { Memory } from "../domain/Memory.ts"
import { speakerOf } from "../ingestion/Speaker.ts"
import { terms, words } from "../retrieval/Text.ts"
import { informative } from "./Sentences.ts"

export type SynthesisKind = "note" | "experience"

export interface FactView {
  readonly memory: Memory
  /** Facts of one bucket may share a note: same user and agent scope, same subject, same kind. */
  readonly bucket: string
  readonly subject: string | null
  readonly kind: SynthesisKind
  /** Its informative sentences (no questions, no pleasantries); empty when it has none. */
  readonly gist: string
  /** Content terms of the gist. */
  readonly terms: ReadonlySet<string>
  readonly entities: ReadonlySet<string>
  /** When what it says happened. */
  readonly time: number
  /** That time as the fact knows it: a day, a month, a year or a range of days ("2022", not "1 January 2022"). */
  readonly when: string
}

/** The speaker of "Name: ..." content, else the user the memory was written for, named as its facts name them ("zara" is Zara). */
export const subjectOf = (memory: Memory): string | null => speakerOf(memory)

const ASSISTANT = /^(assistant|ai|agent|bot)$/i

/** What the agent recorded of itself (agent scope, or the assistant's turns) becomes experience; the rest notes. */
export const kindOf = (memory: Memory, subject: string | null): SynthesisKind =>
  (memory.agentId !== null && memory.userId === null) || (subject !== null && ASSISTANT.test(subject)) || memory.type === "experience"
    ? "experience"
    : "note"

export const bucketOf = (memory: Memory, subject: string | null, kind: SynthesisKind) =>
  `${kind}|${memory.userId ?? ""}|${memory.agentId ?? ""}|${(subject ?? "").toLowerCase()}`

/** The subject's name: who a fact is about, not what it says. */
const namesOf = (subject: string | null) => new Set(subject === null ? [] : words(subject))

/**
 * Views already read, per memory object. Memories are immutable (a change
 * replaces the object), so a view stays right for as long as its memory is
 * in the space; each run then reads only the facts that are new to it.
 */
const views = new WeakMap<Memory, FactView>()

export const view = (memory: Memory): FactView => {
  const known = views.get(memory)
  if (known !== undefined) return known
  const made = readView(memory)
  views.set(memory, made)
  return made
}

const readView = (memory: Memory): FactView => {
  const subject = subjectOf(memory)
  const kind = kindOf(memory, subject)
  const names = namesOf(subject)
  const gist = informative(memory.text.replace(/^[^:]{1,40}:\s+/, ""), names)
  const own = new Set(subject === null ? [] : terms(subject))
  return {
    memory,
    bucket: bucketOf(memory, subject, kind),
    subject,
    kind,
    gist,
    terms: new Set(terms(gist).filter((t) => !own.has(t) && !names.has(t) && !/^\d+$/.test(t))),
    entities: new Set(
      memory.entities.map((e) => e.name.toLowerCase()).filter((name) => subject === null || name !== subject.toLowerCase())
    ),
    time: (memory.occurredStart ?? memory.eventTime).getTime(),
    when: eventLabel(memory.occurredStart ?? memory.eventTime, memory.occurredStart === null ? null : memory.occurredEnd)
  }
}
