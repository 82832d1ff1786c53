/**
 * compromise's parse of a text with its tagger run only on the sentences that
 * can hold a name. Tagging is nearly all the cost of entity extraction, and in
 * a long assistant turn most sentences name nobody. A sentence is skipped
 * only when compromise's own lexicon and rules (read from its model) cannot
 * make any of its words a person, place, organisation or proper noun; a
 * skipped sentence stays untagged, so the matchers find nothing in it.
 */
import type compromise from "compromise"
import { createRequire } from "node:module"
import { installFastSweep } from "./PostTaggerSweep.ts"

type View = ReturnType<typeof compromise.tokenize>
type Term = View["document"][number][number]

const requireCjs = createRequire(import.meta.url)
let loadedNlp: typeof compromise | undefined
/**
 * compromise, loaded on first use (about 0.3 s and 15 MB of start-up otherwise): its CommonJS build, read
 * synchronously, with its post-tagger's sweep replaced by an equivalent faster one (PostTaggerSweep).
 */
export const nlp = (): typeof compromise => {
  if (loadedNlp === undefined) {
    const loaded: typeof compromise = requireCjs("compromise")
    installFastSweep(loaded)
    loadedNlp = loaded
  }
  return loadedNlp
}

const entriesOf = (value: unknown): Array<[string, unknown]> => (typeof value === "object" && value !== null ? Object.entries(value) : [])
const fieldsOf = (value: unknown): Map<string, unknown> => new Map(entriesOf(value))
const stringsOf = (value: unknown): Array<string> =>
  typeof value === "string" ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

/** What a word can become by compromise's lexicon. */
const NAMED = 1
const NOUN = 2
const VALUE = 4

/**
 * Rules of compromise's post-tagger (14.17) that make a name without a name,
 * a capital or a switch word beside them, by their `reason`, and the words
 * that must be present for each: "the delivery van driver" is a person,
 * "salt & pepper" an organisation, "12 main street" a place.
 */
const UNPROMPTED = new Set(["van der noun", "king-of-noun", "first lady", "Noun-&-Noun", "school-board", "special-comittee",
  "noun-public-school", "united-sportsteam", "portland-or", "near turkey", "address-st", "port-name"])
const RULE_WORDS = ["van", "&", "n", "turkey", "port", "mount", "mt"]
const RULE_PHRASES = ["health board", "school board", "commerce board", "public school", "private school", "portland or",
  ..."nominating special conference executive steering central congressional".split(" ").map((w) => `${w} committee`),
  ..."dc atlanta minnesota manchester newcastle sheffield".split(" ").map((w) => `${w} united`),
  ..."king queen prince saint lady".split(" ").map((w) => `${w} of`)]
const ORDINALS = new Set(["first", "second", "third", "1st", "2nd", "3rd"])
const STREETS = new Set(["st", "street", "rd", "road", "crescent", "cr", "way", "tr", "terrace", "avenue", "ave", "lane", "boulevard",
  "blvd", "drive", "dr", "parkway"])
const SWITCH_PREFIX = /^(under|over|mis|re|un|dis|semi)-?/

interface Cues {
  readonly lexicon: ReadonlyMap<string, number>
  readonly words: ReadonlySet<string>
  readonly phrases: ReadonlySet<string>
  /** The first word of each phrase, with the most words a phrase starting with it has. */
  readonly phraseStarts: ReadonlyMap<string, number>
  readonly switches: ReadonlySet<string>
  /** Endings compromise reads as a place or a surname ("-ville", "-sson"), by length. */
  readonly suffixes: ReadonlyMap<number, ReadonlySet<string>>
  readonly patterns: ReadonlyArray<RegExp>
  /** Words after which a capitalised opener becomes an organisation or a place ("Community center"). */
  readonly orgAndPlaceWords: ReadonlySet<string>
  /** False when this compromise has rules the cues do not know: every sentence is then tagged. */
  readonly complete: boolean
  /**
   * Plain words compromise does not keep as they are written: its contractions ("gonna": "going to") and aliases
   * ("plz"). Undefined when its model does not list them: every sentence is then tokenized.
   */
  readonly rewritten: ReadonlySet<string> | undefined
}

const readCues = (): Cues => {
  const model = fieldsOf(nlp().model())
  const one = fieldsOf(model.get("one"))
  const two = fieldsOf(model.get("two"))
  const parents = new Map([...fieldsOf(one.get("tagSet"))].map(([tag, def]) => [tag, stringsOf(fieldsOf(def).get("parents"))]))
  const within = (tag: string, roots: ReadonlyArray<string>) => roots.includes(tag) || (parents.get(tag) ?? []).some((p) => roots.includes(p))
  const named = (tag: string) => within(tag, ["Person", "Place", "Organization", "ProperNoun", "Address"])
  // An acronym ("u.s.", "the FBI") can become an organisation too.
  const cue = (tag: string) => named(tag) || tag === "Acronym"

  const lexicon = new Map<string, number>()
  const words = new Set(RULE_WORDS)
  const phrases = new Set(RULE_PHRASES)
  const tagFlags = new Map([...parents.keys()].map((tag) =>
    [tag, (cue(tag) ? NAMED : 0) | (within(tag, ["Noun"]) ? NOUN : 0) | (within(tag, ["Value"]) ? VALUE : 0)]))
  for (const source of [one.get("lexicon"), one.get("frozenLex")]) {
    for (const [word, value] of entriesOf(source)) {
      let flags = 0
      for (const tag of typeof value === "string" ? [value] : stringsOf(value)) flags |= tagFlags.get(tag) ?? (cue(tag) ? NAMED : 0)
      const phrase = word.includes(" ")
      if (!phrase) lexicon.set(word, (lexicon.get(word) ?? 0) | flags)
      if (flags & NAMED) (phrase ? phrases : words).add(word)
    }
  }
  const switches = new Set(entriesOf(two.get("switches"))
    .filter(([, forms]) => stringsOf(forms).some((form) => form.split("|").some(cue)))
    .map(([word]) => word))
  const suffixes = new Map<number, Set<string>>()
  for (const [length, endings] of fieldsOf(two.get("suffixPatterns"))) {
    const naming = entriesOf(endings).filter(([, tags]) => stringsOf(tags).some(cue)).map(([ending]) => ending)
    if (naming.length > 0) suffixes.set(Number(length), new Set(naming))
  }
  const rules = [two.get("regexNormal"), two.get("regexText"), two.get("regexNumbers"), ...fieldsOf(two.get("endsWith")).values()]
  const patterns = rules.flatMap((list) => Array.isArray(list) ? list : []).flatMap((rule: unknown) =>
    Array.isArray(rule) && rule[0] instanceof RegExp && stringsOf(rule[1]).some(cue) ? [rule[0]] : [])
  // A neighbouring word that makes an unknown word a name ("... jr") is a cue; a neighbouring tag must itself be a name's.
  let complete = true
  for (const [side, pairs] of fieldsOf(two.get("neighbours"))) {
    for (const pair of Array.isArray(pairs) ? pairs : []) {
      const [neighbour, tag] = stringsOf(pair)
      if (neighbour === undefined || tag === undefined || !cue(tag)) continue
      if (side.endsWith("Words")) words.add(neighbour)
      else if (!cue(neighbour)) complete = false
    }
  }
  // A post-tagger rule that can make a name with no name-like word in it must be one of those the cues know.
  const needsName = (token: unknown): boolean => {
    const t = fieldsOf(token)
    if (t.get("optional") === true) return false
    const tag = t.get("tag")
    if (typeof tag === "string" && cue(tag)) return true
    const form = t.get("switch")
    if (typeof form === "string" && form.split("|").some(cue)) return true
    if (t.get("method") === "isTitleCase") return true
    const choices = t.get("choices")
    if (!Array.isArray(choices)) return false
    const each = (choice: unknown) => Array.isArray(choice) && choice.some(needsName)
    return t.get("operator") === "and" ? choices.some(each) : choices.every(each)
  }
  const matches = two.get("matches")
  for (const rule of Array.isArray(matches) ? matches : []) {
    const r = fieldsOf(rule)
    const match = r.get("match")
    if (typeof match !== "string" || !stringsOf(r.get("tag")).some((tag) => tag.split(/[ |]/).some(cue))) continue
    if (!nlp().parseMatch(match).some(needsName) && !UNPROMPTED.has(String(r.get("reason")))) complete = false
  }
  const contractions = one.get("contractions")
  const rewritten = Array.isArray(contractions) && typeof one.get("aliases") === "object"
    ? new Set([...contractions.flatMap((entry: unknown) => stringsOf(fieldsOf(entry).get("word"))), ...fieldsOf(one.get("aliases")).keys()])
    : undefined
  return {
    lexicon, words, phrases, switches, suffixes, patterns, complete, rewritten,
    phraseStarts: [...phrases].reduce((starts, phrase) => {
      const words = phrase.split(" ")
      return starts.set(words[0]!, Math.max(starts.get(words[0]!) ?? 0, words.length))
    }, new Map<string, number>()),
    orgAndPlaceWords: new Set([...fieldsOf(two.get("orgWords")).keys(), ...fieldsOf(two.get("placeWords")).keys()])
  }
}

let loadedCues: Cues | undefined
const cues = () => (loadedCues ??= readCues())

/** What the cues read of a term: compromise's, or one read straight off a plain sentence (`plainTerms`). */
type TermLike = Pick<Term, "text" | "normal"> & { readonly machine?: unknown; readonly implicit?: unknown; readonly alias?: unknown }

/** The form compromise looks words up by. */
const wordOf = (term: TermLike) => ("machine" in term && typeof term.machine === "string" && term.machine !== "" ? term.machine : term.normal)
const implicitOf = (term: TermLike) => ("implicit" in term && typeof term.implicit === "string" ? term.implicit : undefined)
const aliasesOf = (term: TermLike) => ("alias" in term ? stringsOf(term.alias) : [])

const UPPER = /\p{Lu}/u
const CAPITALISED = /^\p{Lu}[^\p{Lu}]*$/u

const endsNamed = (c: Cues, word: string) => {
  for (let length = Math.min(7, word.length - 1); length > 1; length--) {
    if (c.suffixes.get(length)?.has(word.slice(word.length - length))) return true
  }
  return false
}

/** A word compromise's lexicon knows and can only read as a common word (a switch word like "Mark" can be a name). */
const commonWord = (c: Cues, term: TermLike) => {
  const flags = c.lexicon.get(wordOf(term))
  return flags !== undefined && (flags & NAMED) === 0 && !c.switches.has(term.normal)
}

/** Answers of `wordCue` by a term's forms: the same words come back in every text, and a word's ~100 pattern tests add up. */
const wordCues = new Map<string, boolean>()

/** Whether a word can become (part of) a name by itself, wherever it stands: lexicon, switch, ending, pattern. */
const wordCue = (c: Cues, term: TermLike, word: string, implicit: string | undefined) => {
  const aliases = aliasesOf(term)
  const key = `${term.text}\u0001${word}\u0001${term.normal}\u0001${implicit ?? ""}\u0001${aliases.join("\u0001")}`
  let cue = wordCues.get(key)
  if (cue === undefined) {
    const switchForm = term.normal !== "" ? term.normal : implicit ?? ""
    cue = c.words.has(word) || c.words.has(term.normal) || aliases.some((alias) => c.words.has(alias)) ||
      c.switches.has(switchForm) || c.switches.has(switchForm.replace(SWITCH_PREFIX, "")) ||
      (implicit !== undefined && c.switches.has(implicit)) ||
      (!c.lexicon.has(word) && (endsNamed(c, term.normal) || (implicit !== undefined && endsNamed(c, implicit)))) ||
      c.patterns.some((p) => p.test(word) || p.test(term.text))
    if (wordCues.size >= 20_000) wordCues.clear()
    wordCues.set(key, cue)
  }
  return cue
}

/** Whether any word of the sentence can become (part of) a name under compromise's rules. */
const mayHoldName = (c: Cues, terms: ReadonlyArray<TermLike>) => {
  let street = false
  let value = false
  for (let i = 0; i < terms.length; i++) {
    const term = terms[i]!
    const word = wordOf(term)
    const implicit = implicitOf(term)
    // A capital makes a proper noun, except on a sentence's common first word ("The", "Sure") not followed by "center", "river"...
    if (UPPER.test(term.text) && term.text !== "I") {
      const next = terms[i + 1]
      const opener = i === 0 && CAPITALISED.test(term.text) && commonWord(c, term) &&
        (next === undefined || !c.orgAndPlaceWords.has(wordOf(next)))
      if (!opener) return true
    }
    if (wordCue(c, term, word, implicit)) return true
    const longest = c.phraseStarts.get(word) ?? 0
    for (let n = 2, phrase = word; n <= longest && i + n <= terms.length; n++) {
      phrase = `${phrase} ${wordOf(terms[i + n - 1]!)}`
      if (c.phrases.has(phrase)) return true
    }
    // "the first teacher" is a person to compromise: an ordinal before any word that may be a noun.
    const after = terms[i + 1]
    if (ORDINALS.has(word) && after !== undefined && !(commonWord(c, after) && ((c.lexicon.get(wordOf(after)) ?? NOUN) & NOUN) === 0)) {
      return true
    }
    street ||= STREETS.has(word)
    value ||= /\d/.test(word) || ((c.lexicon.get(word) ?? 0) & VALUE) !== 0
  }
  return street && value
}

/** A word and what follows it: letters, then only the punctuation compromise keeps beside a term (",", "."...). */
const PLAIN_TOKEN = /^([A-Za-z]+)[,.;:!?]*$/
const OPENER = /^[A-Z][a-z]+$/

/**
 * The terms compromise's tokenizer makes of a sentence, when the sentence is
 * plain enough to read them off its text: every word lower-case letters (a
 * capitalised first word, or "I", aside) followed by nothing but trailing
 * punctuation, none of them a contraction or alias compromise rewrites. Such
 * a word is one term whose text is the word and whose normal form is it in
 * lower case, with no other form. Undefined for any other sentence.
 */
const plainTerms = (c: Cues, sentence: string): Array<TermLike> | undefined => {
  if (c.rewritten === undefined) return undefined
  const tokens = sentence.trim().split(/\s+/)
  const terms: Array<TermLike> = []
  for (let i = 0; i < tokens.length; i++) {
    const word = PLAIN_TOKEN.exec(tokens[i]!)?.[1]
    if (word === undefined) return undefined
    const normal = word.toLowerCase()
    if (word !== normal && word !== "I" && !(i === 0 && OPENER.test(word))) return undefined
    if (c.rewritten.has(normal)) return undefined
    terms.push({ text: word, normal })
  }
  return terms
}

let loadedSplitter: ((text: string) => ReadonlyArray<string> | undefined) | null | undefined
/** compromise's own sentence splitter (a small part of its tokenizer); null if this compromise has none where expected. */
const splitter = () => {
  if (loadedSplitter !== undefined) return loadedSplitter
  const world: unknown = nlp().world()
  const methods = fieldsOf(fieldsOf(world).get("methods"))
  const split = fieldsOf(fieldsOf(methods.get("one")).get("tokenize")).get("splitSentences")
  loadedSplitter = typeof split !== "function" ? null : (text: string) => {
    const out: unknown = Reflect.apply(split, undefined, [text, world])
    return Array.isArray(out) && out.every((s) => typeof s === "string") ? stringsOf(out) : undefined
  }
  return loadedSplitter
}

/**
 * compromise's sentences of a text without the ones that provably name no
 * one (a plain sentence, `plainTerms`, in which none of its words can become
 * a name): those are not even tokenized. Undefined when the text cannot be
 * split that way here.
 */
const sentencesThatMayName = (c: Cues, text: string): ReadonlyArray<string> | undefined => {
  const split = splitter()
  const sentences = split === null ? undefined : split(text)
  if (sentences === undefined) return undefined
  return sentences.filter((sentence) => {
    const terms = plainTerms(c, sentence)
    return terms === undefined || mayHoldName(c, terms)
  })
}

/** Tags the sentences of `doc` that can hold a name; undefined when none can. */
const tagNamed = (c: Cues, doc: View): View | undefined => {
  doc.compute(["index", "id"])
  const named = c.complete ? doc.filter((sentence) => mayHoldName(c, sentence.docs[0] ?? [])) : doc
  if (!named.found) return undefined
  named.compute(["freeze", "typeahead", "lexicon", "preTagger", "contractionTwo", "postTagger"])
  // The matchers run on the whole document: on a view of some of its sentences, compromise's people() loses a name before a full stop.
  return doc
}

/**
 * The text parsed by compromise, with its tagger run on the sentences that can
 * hold a name (all of them when its rules are not all known here); undefined
 * when none can. People, places, organisations and proper nouns found in it are
 * those a full parse finds. The sentences that provably name no one are
 * left out of the document before compromise tokenizes it (tokenizing is a
 * fifth of a long turn's extraction); the rest are tokenized together, and if
 * compromise then splits them differently from how it split the whole text,
 * the whole text is parsed instead.
 */
export const parseNames = (text: string): View | undefined => {
  const c = cues()
  const kept = c.complete ? sentencesThatMayName(c, text) : undefined
  if (kept !== undefined) {
    if (kept.length === 0) return undefined
    const doc = nlp().tokenize(kept.join(""))
    if (doc.document.length === kept.length) return tagNamed(c, doc)
  }
  return tagNamed(c, nlp().tokenize(text))
}
