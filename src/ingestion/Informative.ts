/**
 * What is worth remembering. A person's words are kept unless they are all
 * filler. An assistant's answer is held to more, because a model says a lot
 * that tells nothing about the user or the world, and a stored "I don't know"
 * comes back in later prompts as if it were a fact.
 */
import { ANSWER_PREFIX, NOTHING_REMEMBERED } from "../models/LocalEngine.ts"
import { spannedSentences } from "./Sentences.ts"

/** Greetings, thanks and fillers carry nothing worth remembering. */
const FILLER = new Set(
  ("ok okay k kk yes yeah yep yup no nope nah sure cool great nice good fine awesome wow omg lol lmao haha hahaha hehe " +
    "thanks thank thx ty you u so much very really hi hello hey hiya bye goodbye see ya later morning night evening afternoon " +
    "day have a an the too oh ah hmm um uh well alright right true totally exactly indeed agreed same glad happy to hear it " +
    "that's thats amazing love sounds me and it's its is was will do what how are doing sweet perfect congrats congratulations " +
    "welcome np problem of course definitely absolutely").split(" ")
)

export const isInformative = (text: string) => {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []
  if (words.length === 0) return false
  return words.some((word) => !FILLER.has(word))
}

/** Speaker labels that name an assistant rather than a person ("Assistant: " is what the proxy records). */
export const isAssistantSpeaker = (speaker: string) => /^(?:assistant|ai|ai assistant|bot|chatbot|agent)$/i.test(speaker.trim())

/** A pattern written with straight apostrophes that also matches typographic ones, case-insensitive. */
const pattern = (source: string) => new RegExp(source.replaceAll("'", "['’]"), "i")

const I_AM = String.raw`(?:I'm|I am)`
const MISSING = String.raw`(?:memor(?:y|ies)|information|info|knowledge|data|idea|clue|details|context|records?|recollection|` +
  String.raw`access|way|answers?|opinions?|feelings|preferences)`
const AI = String.raw`(?:AI language model|AI assistant|AI model|language model|AI|assistant)`
/** A word of praise, alone or before what it praises ("a great idea"): a reaction that says nothing of its own. */
const REACTION = String.raw`(?:exciting|great|amazing|awesome|wonderful|fun|lovely|nice|fantastic|cool|interesting|incredible|perfect|good|` +
  String.raw`brilliant|beautiful|delightful|terrific|thrilling|fascinating|impressive|neat|sweet|smart|clever|fabulous|excellent|` +
  String.raw`marvell?ous|splendid|exciting)(?: (?:idea|plan|news|trip|time|choice|question|thought))?`

/**
 * Clauses of an assistant's answer that tell nothing, each tried without its
 * trailing punctuation. Questions and filler are caught apart (`isNonAnswer`).
 */
const NON_ANSWERS: ReadonlyArray<RegExp> = [
  // Refusals: "I can't help with that", "I'm unable to provide ...", "I won't do that".
  pattern(String.raw`^(?:I|we) (?:really |truly |just |simply |currently |still |unfortunately )?(?:can't|cannot|can not|won't|will not)\b`),
  pattern(String.raw`^(?:${I_AM}|we're|we are) (?:really |truly |just |simply |currently |still |unfortunately )?(?:unable|not able|not allowed|not permitted|not in a position) to\b`),
  pattern(String.raw`^(?:I|we) (?:must|have to|need to) decline\b`),
  // Not knowing: "I don't know", "I don't have that information", "I don't remember you telling me".
  pattern(String.raw`^I (?:really |honestly |just |simply |actually |unfortunately |currently )?(?:do not|don't|dont) (?:really |actually |currently )?` +
    String.raw`(?:know|recall|remember|understand|have (?:any |that |the |this |such |enough |specific |stored |personal |real-time )?` +
    String.raw`(?:${MISSING}|an answer|a way|the ability|the means|that|this|it))\b`),
  pattern(String.raw`^${I_AM} (?:really |just |honestly |still )?not (?:(?:entirely|completely|totally|100%|quite|really|fully) )?(?:sure|certain|aware|familiar|positive)\b`),
  // "I have no stored memories about that yet" (the built-in engine's own), "I have no idea".
  pattern(String.raw`^I (?:have no|haven't got any|have not got any) (?:[\w-]+ ){0,3}?${MISSING}\b`),
  pattern(String.raw`^(?:there (?:is|are|'s) )?no (?:(?:stored|saved|relevant|matching|such|prior|previous) )*${MISSING}\b`),
  pattern(String.raw`^(?:no idea|not sure|not certain|no clue|unsure|beats me|hard to say|it(?:'s| is) hard to (?:say|tell))$`),
  pattern(String.raw`^(?:that's|that is|this is) (?:beyond|outside) (?:my|what I)\b`),
  pattern(String.raw`^as an? ${AI}$`),
  // Apologies: "I'm sorry to hear that", "Sorry about the confusion", "I apologize for ...".
  pattern(String.raw`^${I_AM} (?:so |very |really |terribly |truly )?sorry\b`),
  pattern(String.raw`^(?:sorry|apologies|my apologies|I apologi[sz]e|oops)\b`),
  // Pleasantries: "You're welcome", "Happy to help", "Hope this helps", "Let me know if ...".
  pattern(String.raw`^(?:you're|you are) (?:very |so |most )?welcome\b`),
  pattern(String.raw`^(?:${I_AM} |I'd be |I would be |I'll be )?(?:always |more than )?(?:happy|glad|delighted|pleased|here) to (?:help|assist)\b`),
  pattern(String.raw`^(?:I )?hope (?:this|that|it) helps\b`),
  pattern(String.raw`^(?:let me know|feel free|don't hesitate|do not hesitate|let me (?:check|think|see|look))\b`),
  pattern(String.raw`^(?:if you (?:have|need|want)|should you (?:have|need))\b.*\b(?:questions?|else|help|anything)\b`),
  pattern(String.raw`^(?:great|good|excellent|interesting|fair) question\b`),
  pattern(String.raw`^(?:good luck|best of luck|take care|have a (?:great|good|nice|wonderful|lovely) \w+)$`),
  pattern(String.raw`^(?:got it|understood|noted|no worries|will do|sounds good|I see|I understand|makes sense|certainly|of course)$`),
  // Reactions: "That sounds exciting", "It's so lovely", "How exciting", "What a great idea".
  pattern(String.raw`^(?:that|this|it)(?:'s| is| was| sounds| looks| seems)(?: like)?(?: (?:so|really|very|absolutely|truly|such|quite|pretty|a|an))* ${REACTION}$`),
  pattern(String.raw`^(?:how|what an?|such an?)(?: (?:so|really|very|absolutely|truly))? ${REACTION}$`)
]

/**
 * Openings that say nothing before a clause that may: "Sorry, ...", "I'm not
 * sure, but ...", "Unfortunately ...". An apology needs its comma or a "but":
 * "I'm sorry for the wait, your order ships Monday" keeps the order, "I'm sorry
 * to hear that" is all apology.
 */
const OPENINGS: ReadonlyArray<RegExp> = [
  pattern(String.raw`^(?:${I_AM} (?:so |very |really |terribly |truly )?sorry|sorry|my apologies|apologies|I apologi[sz]e)` +
    String.raw`(?: (?:for|about|to hear)\b[^,;:!.?]{0,60})?(?:\s*[,!.:;—–-]+\s*|\s+(?=but\s))(?:but\s+)?`),
  pattern(String.raw`^(?:${I_AM} not (?:entirely |completely |quite |totally |100% )?(?:sure|certain)|not sure|I don't know for (?:sure|certain)|I can't be (?:sure|certain))(?:\s*[,;:—–-]+\s*|\s+(?=but\s))(?:but\s+)?`),
  pattern(String.raw`^(?:unfortunately|sadly|regrettably|honestly|to be honest|${I_AM} afraid(?: that)?|as an? ${AI})(?:\s*[,!:—–-]+\s*|\s+)`)
]

/** Where a sentence divides into clauses that stand alone: "..., but ...", "...; ...", "... — ...", "..., though ...". */
const CLAUSE = /(,\s*but\s+|;\s+|\s+[—–]\s+|,\s*(?:though|however|although),?\s+)/i

const TRAILING = /[\s.!…,;:"'’”)\]]+$/u
const QUESTION = /\?["'’”)\]\s]*$/u

/** A clause of an assistant's answer that tells nothing: a non-answer, a question, or filler. */
const isNonAnswer = (clause: string) => {
  if (QUESTION.test(clause)) return true
  const text = clause.replace(TRAILING, "").trim()
  return !isInformative(text) || NON_ANSWERS.some((p) => p.test(text))
}

/** The clause without openings that say nothing ("Sorry, the museum is closed" -> "the museum is closed"). */
const withoutOpenings = (clause: string) => {
  let text = clause.trim()
  for (let again = true; again;) {
    again = false
    for (const opening of OPENINGS) {
      const rest = text.replace(opening, "")
      if (rest !== text && rest.trim() !== "") {
        text = rest.trim()
        again = true
      }
    }
  }
  return text
}

/** What a sentence says once its non-answer clauses are gone; "" when nothing. */
const informativeSentence = (sentence: string) => {
  const parts = sentence.split(CLAUSE)
  const kept: Array<string> = []
  for (let i = 0; i < parts.length; i += 2) {
    const clause = withoutOpenings(parts[i]!)
    if (isNonAnswer(clause)) continue
    kept.push(kept.length === 0 ? clause : `${parts[i - 1] ?? " "}${clause}`)
  }
  if (kept.length === 0) return ""
  const text = kept.join("")
  if (text === sentence) return sentence
  // What is left starts the sentence and ends it as the whole one ended.
  const capitalised = text.replace(/^([-*•]\s+)?(\p{Ll})/u, (_, bullet: string | undefined, first: string) => `${bullet ?? ""}${first.toUpperCase()}`)
  const ended = /[.!?…]["'’”)\]]*$/u
  return ended.test(capitalised) || !ended.test(sentence) ? capitalised : `${capitalised.replace(/[\s,;:—–-]+$/u, "")}.`
}

/**
 * What of an assistant's answer is worth remembering, sentence by sentence;
 * "" when nothing is. Left out:
 * - refusals: "I can't help with that", "I'm sorry, I cannot ...";
 * - not knowing: "I don't know", "I'm not sure", "I don't have that
 *   information", "I have no (stored) memories about ...";
 * - apologies and pleasantries with nothing else: "Sorry about that!",
 *   "Happy to help", "Let me know if you need anything else";
 * - questions back to the user: a sentence or clause ending in "?";
 * - the built-in engine's own answers: NOTHING_REMEMBERED, and its
 *   "From memory:" quotes, which repeat memories already stored (kept, they
 *   would come back beside the originals and outlive their deletion).
 * An opening that says nothing is cut and the rest kept: "I'm not sure, but
 * the museum opens at 9" keeps "The museum opens at 9".
 * Only for an assistant's words: from a person, "I don't know how to swim"
 * is a fact about them.
 */
export const informativeAnswer = (answer: string) => {
  const text = answer.trim()
  if (text.startsWith(ANSWER_PREFIX) || text === NOTHING_REMEMBERED) return ""
  const kept: Array<string> = []
  for (const { gap, sentence } of spannedSentences(text)) {
    const said = informativeSentence(sentence)
    if (said !== "") kept.push(kept.length === 0 ? said : `${gap}${said}`)
  }
  return kept.join("")
}
