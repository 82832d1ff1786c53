/**
 * The sentences of a fact that carry information: not questions, not
 * pleasantries. A conversation turn is often half greeting ("Thanks, Mel!
 * Wow!") and half news; a note keeps the news, and groups facts by it.
 */
import { sentences } from "../ingestion/Sentences.ts"
import { isStopword, words } from "../retrieval/Text.ts"

/** Words that say nothing of the world by themselves: greetings, thanks, exclamations, agreement. */
export const PLEASANTRY: ReadonlySet<string> = new Set(
  ("thanks thank thx ty wow awesome amazing great cool nice lovely glad happy hey hi hello bye yeah yes yep sure totally " +
    "absolutely definitely agree agreed love sounds fun congrats congratulations appreciate appreciated means lot kind words " +
    "really super so much good wonderful fantastic incredible beautiful gorgeous hope hear keep up stay safe take care " +
    "pic photo looks look exciting excited proud inspiring inspired mel").split(" ")
)

/** A sentence worth keeping: a statement with at least two words that are neither stopwords, pleasantries nor `names`. */
export const carriesInformation = (sentence: string, names: ReadonlySet<string>) => {
  const trimmed = sentence.trim()
  if (trimmed === "" || /\?["')\]]*$/.test(trimmed)) return false
  let content = 0
  for (const word of words(trimmed)) {
    if (isStopword(word) || PLEASANTRY.has(word) || names.has(word) || word.length < 3) continue
    if (++content >= 2) return true
  }
  return false
}

/** The informative sentences of a text, joined; empty when it has none. */
export const informative = (text: string, names: ReadonlySet<string>) =>
  sentences(text).filter((s) => carriesInformation(s, names)).join(" ")
