import { escapeRegExp } from "./Patterns.ts"

/** "Caroline: I went…" -> speaker Caroline. A time ("10:30") or URL before the colon is not a speaker. */
const SPEAKER = /^\s*([A-Z][\p{L}.'’-]*(?:[ -][A-Z][\p{L}.'’-]*){0,3})\s*:\s+([\s\S]+)$/u

export const splitSpeaker = (content: string): { speaker: string | null; body: string } => {
  const m = SPEAKER.exec(content)
  if (!m || /^(https?|note|re|fw|fwd|ps|update|todo|tip|warning|question|answer|q|a)$/i.test(m[1]!)) {
    return { speaker: null, body: content.trim() }
  }
  return { speaker: m[1]!, body: m[2]!.trim() }
}

const possessive = (name: string) => (name.endsWith("s") ? `${name}'` : `${name}'s`)

/** Words that may stand between "I" and its verb ("I really love"). */
const ADVERBS = ("really just also still always never often usually actually totally definitely even sometimes only truly " +
  "absolutely certainly honestly mostly finally recently already seriously genuinely probably personally kinda sorta rarely " +
  "hardly barely generally normally sincerely constantly currently especially literally simply basically obviously too " +
  "now then sure def first once later soon ever all both each alone together").split(" ")

/** Past forms of irregular verbs, and verbs whose past is their present: no present-tense ending is added to them. */
const NO_ENDING = new Set(("went got saw made took had did was were came felt found thought knew gave told said left bought " +
  "brought ran began kept met heard wrote became grew drew threw flew ate drank swam sang rode drove fell broke chose spoke woke " +
  "forgot understood won lost spent sent built taught caught fought held led meant paid slept stood sat sold lit fed hung dug " +
  "stuck struck swung shook tore wore hid bit slid spun sank stole froze rose forgave overcame undertook withdrew sought " +
  "read put set cut hit let hurt quit cost spread shut beat burst cast fit split upset used " +
  "learnt spelt dreamt burnt leapt knelt smelt spilt spoilt lent bent wept crept swept " +
  "can could will would shall should may might must ought gotta gonna has is does").split(" "))

/** Verbs whose present ends in "-eed", which would otherwise read as a past ("I need", not "I agreed"). */
const EED_PRESENT = new Set("need feed bleed breed exceed proceed succeed speed heed seed weed".split(" "))

/** A past or modal form, or one already in the third person: it takes no ending ("retook" as "took"). */
const takesNoEnding = (verb: string) =>
  NO_ENDING.has(verb) || NO_ENDING.has(verb.replace(/^(?:re|over|under|mis|out|un|fore|with)/, "")) ||
  (verb.endsWith("ed") && !EED_PRESENT.has(verb))

/** Before "I", a question ("do I", "can I", "don't I") or a subject of several ("Mel and I", "my kids and I"): the verb keeps its form. */
const QUESTION_BEFORE = /\b(?:do|does|did|can|could|will|would|shall|should|may|might|must|am|are|is|have|has|had|was|were|wo|ca|sha)(?:n['’]t)?\s+$/i
const SEVERAL_BEFORE = new RegExp(
  String.raw`(?:\b\p{Lu}[\p{L}'’-]*|\b(?:you|he|she|we|they|him|her|them|husband|wife|partner|kids|children|family|friends?|mom|mum|` +
    String.raw`dad|sister|brother|son|daughter|boyfriend|girlfriend|fianc[eé]e?|team|crew|colleagues?|roommates?))\s+(?:and|or|&)\s+$`,
  "u"
)
const keepsForm = (before: string) => QUESTION_BEFORE.test(before) || SEVERAL_BEFORE.test(before)

const ENDINGS: ReadonlyArray<readonly [RegExp, string]> = [[/(?:s|x|z|ch|sh|o)$/, "es"], [/[^aeiou]y$/, "ies"]]

/** The verb as a third person says it: "love" -> "loves", "am" -> "is", "don't" -> "doesn't"; past and modal forms as they are. */
const thirdPerson = (verb: string) => {
  const negated = /^(\w+)(n['’]t)$/.exec(verb)
  if (negated) return negated[1] === "do" ? `does${negated[2]}` : negated[1] === "have" ? `has${negated[2]}` : verb
  if (verb === "am") return "is"
  if (verb === "have") return "has"
  if (verb === "wanna") return "wants to"
  if (takesNoEnding(verb)) return verb
  for (const [ending, replacement] of ENDINGS) {
    if (ending.test(verb)) return replacement === "ies" ? `${verb.slice(0, -1)}ies` : `${verb}${replacement}`
  }
  return `${verb}s`
}

/** Verbs that end in "-ly", which an adverb's ending would otherwise claim ("I rely", "I apply"). */
const LY_VERBS = "apply|reply|supply|rely|imply|multiply|comply|bully|rally|tally|ally|fly|sully|dally"

/** Between "I" and its verb: the adverbs above, and any other word in "-ly" that is no verb ("I nearly", "I quickly"). */
const ADVERB = String.raw`(?:${ADVERBS.join("|")}|(?!(?:${LY_VERBS})\b)[a-z]{2,}ly)`

const SUBJECT_I = new RegExp(String.raw`\bI((?:\s+${ADVERB})*)\s+([a-z]+?(?:n['’]t)?)\b`, "g")

/** In a question, the auxiliary before "I" agrees with the speaker who replaces it: "do I" -> "does Caroline". */
const INVERTED: Readonly<Record<string, string>> = { do: "does", am: "is", have: "has", "don't": "doesn't", "haven't": "hasn't" }
const AUXILIARY_I = /\b(do|am|have|don['’]t|haven['’]t)(\s+)I\b/gi
const agreeing = (_: string, auxiliary: string, space: string) => {
  const replaced = INVERTED[auxiliary.toLowerCase().replace("’", "'")]!.replace("'", auxiliary.includes("’") ? "’" : "'")
  return `${/^\p{Lu}/u.test(auxiliary) ? replaced[0]!.toUpperCase() + replaced.slice(1) : replaced}${space}I`
}

/**
 * A scope id written as one plain lower-case word ("marco", the proxy's
 * `x-svc-user-id`) read as the name it is, capitalised, when the text is
 * rewritten in the third person; any other id ("u-42", "john.doe") as it is.
 */
export const speakerName = (id: string) => (/^\p{Ll}[\p{Ll}'’-]*$/u.test(id) ? `${id[0]!.toUpperCase()}${id.slice(1)}` : id)

/** Who said what a memory holds: the speaker of "Name: ..." content, else the user it was written for (see `speakerName`). */
export const speakerOf = (memory: { readonly sourceText: string; readonly text: string; readonly userId: string | null }): string | null =>
  splitSpeaker(memory.sourceText).speaker ?? splitSpeaker(memory.text).speaker ?? (memory.userId === null ? null : speakerName(memory.userId))

/**
 * First person -> the speaker, conservatively; second person is left alone.
 * The verb after "I" takes the third person ("I really love" -> "Caroline
 * really loves"), except in a question or after a subject of several.
 */
export const resolveFirstPerson = (sentence: string, speaker: string) =>
  sentence
    .replace(AUXILIARY_I, agreeing)
    .replace(/\bI'm\b|\bI am\b/g, `${speaker} is`)
    .replace(/\bI've\b/g, `${speaker} has`)
    .replace(/\bI'd\b/g, `${speaker} would`)
    .replace(/\bI'll\b/g, `${speaker} will`)
    .replace(/\bI was\b/g, `${speaker} was`)
    .replace(SUBJECT_I, (whole, between: string, verb: string, offset: number, text: string) =>
      keepsForm(text.slice(0, offset)) ? whole : `I${between} ${thirdPerson(verb)}`)
    .replace(/\bI\b/g, speaker)
    .replace(/\b[Mm]yself\b/g, speaker)
    .replace(/\b[Mm]ine\b/g, possessive(speaker))
    .replace(/\b[Mm]y\b/g, possessive(speaker))
    .replace(/(\b(?:to|with|for|at|about|from|by|of|gave|told|showed|asked|helped|let|made|call|told|tell|taught|sent)\s+)me\b/gi, `$1${speaker}`)
    // "I'm Marco" said by Marco introduces him: kept as said, never "Marco is Marco".
    .replace(new RegExp(`\\b${escapeRegExp(speaker)} is (?=${escapeRegExp(speaker)}\\b)`, "g"), "I'm ")
