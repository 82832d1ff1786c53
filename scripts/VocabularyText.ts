/**
 * Benchmark text with a real vocabulary: sentences of words drawn Zipf-like
 * from the word-vector vocabulary (most frequent first), with invented people,
 * places and dates mixed in at the rates real chat turns have them. Synthetic
 * text of a few dozen words makes keyword postings, vectors and extraction look
 * cheaper than real text does; this keeps their size and spread realistic
 * while staying deterministic and endless (a million items, none held).
 *
 * `npx tsx scripts/VocabularyText.ts --measure` measures the rates below again;
 * `--sample` prints a few sentences, turns and questions.
 */
import type compromise from "compromise"
import type { DatesMethods, default as datesPlugin } from "compromise-dates"
import { closeSync, openSync, readFileSync, readSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { compactedFile } from "../services/embedder/Glove.ts"

/*
 * Measured by `measureRates()` on every turn of ../shared/bench/locomo-dev.json
 * (five LoCoMo conversations: 2,760 turns, 349,159 characters of turn text,
 * speaker labels not included), each turn parsed alone by compromise 14.17 with
 * compromise-dates 3.9: `.people()`, `.places()` and `.dates()` matches per
 * 1,000 characters; words (whitespace-separated tokens holding a letter or
 * digit) per `.sentences()` sentence; a sentence's last character for its end.
 * Most people found are first names, the other speaker addressed ("Thanks, Maria!").
 */
export const PEOPLE_PER_1000_CHARS = 3.514
export const PLACES_PER_1000_CHARS = 0.18
export const DATES_PER_1000_CHARS = 0.859
export const WORDS_PER_SENTENCE = 7.66
export const WORDS_PER_SENTENCE_SD = 5.04
/** Of sentences: those ending in "?" and in "!"; the rest (mostly ".") end in ".". */
export const QUESTION_SHARE = 0.113
export const EXCLAMATION_SHARE = 0.368

/** Zipf exponent of word (and person, place) ranks: natural text is close to 1. */
const ZIPF_S = 1.07
/** The most frequent plain lower-case words kept; the tail is mostly rare names and noise. */
const VOCABULARY_CAP = 100_000
const PEOPLE = 50_000
const PLACES = 3_000
/** The people a question names: the most frequent ones, that a space surely holds. */
const ASKED_PEOPLE = 100
/** Of person mentions, those by first name alone: real turns mostly address the other speaker so. */
const FIRST_NAME_SHARE = 0.7

type Random = () => number

/** mulberry32: a small seeded generator, so every run writes the same text. */
const seeded = (seed: number): Random => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Draws ranks 0..n-1 with probability proportional to 1/(rank+1)^s: a cumulative table, searched in log n steps. */
const zipf = (n: number, random: Random) => {
  const cumulative = new Float64Array(n)
  let sum = 0
  for (let r = 0; r < n; r++) cumulative[r] = sum += 1 / (r + 1) ** ZIPF_S
  return () => {
    const u = random() * sum
    let low = 0, high = n - 1
    while (low < high) {
      const mid = (low + high) >>> 1
      if (cumulative[mid]! < u) low = mid + 1
      else high = mid
    }
    return low
  }
}

/**
 * Tags of compromise's lexicon that make a word a name, a place or a date
 * (lower case or not: "china", "michael", "september"). The word vectors'
 * vocabulary is full of them; drawn as plain words they made the text name
 * 2.4 places and 2.0 dates per 1,000 characters where real turns name 0.18
 * and 0.86, and the invented names and dates below would not be the rates.
 */
const NAMING_TAGS = new Set(["Place", "Country", "City", "Region", "Person", "FirstName", "LastName", "MaleName", "FemaleName",
  "Organization", "SportsTeam", "ProperNoun", "Honorific", "Demonym", "Month", "WeekDay", "Date", "Holiday", "Duration"])

/** The words compromise's own lexicon knows as names, places or dates. */
const namingWords = (): ReadonlySet<string> => {
  const nlp: typeof compromise = requireCjs("compromise")
  const lexicon: unknown = nlp.world().model.one.lexicon
  const out = new Set<string>()
  if (typeof lexicon !== "object" || lexicon === null) return out
  for (const [word, tags] of Object.entries(lexicon)) {
    const list: ReadonlyArray<unknown> = Array.isArray(tags) ? tags : [tags]
    if (list.some((tag) => typeof tag === "string" && NAMING_TAGS.has(tag))) out.add(word)
  }
  return out
}

/** The vocabulary of a compacted word-vector file (see services/embedder/Glove.ts), most frequent first, names left out. */
const readVocabulary = (file: string) => {
  const fd = openSync(file, "r")
  try {
    const header = Buffer.alloc(16)
    readSync(fd, header, 0, 16, 0)
    if (header.readUInt32LE(0) !== 0x474c5631) throw new Error(`${file} is not a compacted word-vector file`)
    const bytes = Buffer.alloc(header.readUInt32LE(12))
    readSync(fd, bytes, 0, bytes.length, 16)
    const naming = namingWords()
    return bytes.toString("utf8").split("\n").filter((w) => /^[a-z]+$/.test(w) && !naming.has(w)).slice(0, VOCABULARY_CAP)
  } finally {
    closeSync(fd)
  }
}

const SYLLABLES = "ka lo ren vi sta mor eli du fen ga tho ri ban sel quo nar pe zul an bre cor da mi tav".split(" ")
const FIRST_ENDINGS = ["", "a", "o", "in", "el", "ie"]
const LAST_ENDINGS = "son ton ez ski er ley berg ard wick ani".split(" ")
const PLACE_SYLLABLES = "bel mar tor vin ash kel dun ora sil bra gue lan fer ost pal rim".split(" ")
const PLACE_ENDINGS = "ford ville mouth stad ia holm port dale ton as burg ena".split(" ")
const PREPOSITIONS = "in in in in at at from from near".split(" ")
const MONTHS = "January February March April May June July August September October November December".split(" ")
const WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split(" ")
const COUNTS = ["two", "three", "four", "five", "a few"]
const capital = (word: string) => word[0]!.toUpperCase() + word.slice(1)
const at = <A>(xs: ReadonlyArray<A>, i: number) => xs[i % xs.length]!
const choose = <A>(xs: ReadonlyArray<A>, random: Random) => xs[Math.floor(random() * xs.length)]!

/** A name of two syllables and an ending, one for each index below 24 * 24 * endings. */
const syllableName = (endings: ReadonlyArray<string>) => (i: number) =>
  capital(at(SYLLABLES, i) + at(SYLLABLES, Math.floor(i / 24)) + at(endings, Math.floor(i / 576)))
const firstName = syllableName(FIRST_ENDINGS)
const lastName = syllableName(LAST_ENDINGS)
const FIRST_NAMES = 24 * 24 * FIRST_ENDINGS.length
const LAST_NAMES = 24 * 24 * LAST_ENDINGS.length
/**
 * The rank-th person, distinct for every rank below FIRST_NAMES * LAST_NAMES: multipliers prime to the
 * name counts are bijections that scatter neighbouring ranks, so the frequent people share no syllables.
 */
const person = (rank: number) => {
  const j = (rank * 7919 + 12345) % (FIRST_NAMES * LAST_NAMES)
  return { first: firstName(j % FIRST_NAMES), last: lastName((Math.floor(j / FIRST_NAMES) * 2417) % LAST_NAMES) }
}
const place = (rank: number) => {
  const j = (rank * 937 + 101) % (16 * 16 * PLACE_ENDINGS.length)
  return capital(at(PLACE_SYLLABLES, j) + at(PLACE_SYLLABLES, Math.floor(j / 16)) + at(PLACE_ENDINGS, Math.floor(j / 256)))
}

/** Date phrases as chat turns say them, the relative ones (the most frequent there) given more weight. */
const DATES: ReadonlyArray<(random: Random) => string> = [
  ...["last week", "last week", "yesterday", "yesterday", "last year", "last month", "next month", "last weekend", "tomorrow",
    "this summer"].map((phrase) => () => phrase),
  (r) => `last ${choose(WEEKDAYS, r)}`,
  (r) => `on ${1 + Math.floor(r() * 28)} ${choose(MONTHS, r)} ${2015 + Math.floor(r() * 10)}`,
  (r) => `in ${2015 + Math.floor(r() * 10)}`,
  (r) => `in ${choose(MONTHS, r)}`,
  (r) => `${choose(COUNTS, r)} weeks ago`,
  (r) => `${choose(COUNTS, r)} days ago`
]

/** A phrase mixed into sentences and its rate per 1,000 characters. */
type Phrase = readonly [rate: number, make: () => string]

/** Mean length of a phrase with the space or end mark after it, from a sample of its draws. */
const meanLength = (phrase: () => string) => {
  let sum = 0
  for (let i = 0; i < 4000; i++) sum += phrase().length + 1
  return sum / 4000
}

/**
 * The chance that a word slot holds each phrase, so each comes at its rate per
 * 1,000 characters: with w a word's mean length and c a phrase's, a slot's mean
 * length E solves E = (1 - sum p) w + sum p c where p = rate E / 1000.
 */
const slotChances = (word: () => string, phrases: ReadonlyArray<Phrase>) => {
  const w = meanLength(word)
  const slotLength = w / (1 + phrases.reduce((sum, [rate, make]) => sum + (rate * (w - meanLength(make))) / 1000, 0))
  return phrases.map(([rate]) => (rate * slotLength) / 1000)
}

export interface VocabularyText {
  /** One sentence: Zipf words with people, places and dates at the measured rates. */
  readonly sentence: () => string
  /** Sentences joined up to about `chars` characters, after a "Name: " speaker label unless `speakerLabel` is false. */
  readonly turn: (chars: number, speakerLabel?: boolean) => string
  /** A question naming one of the most frequent people and a word or two. */
  readonly question: () => string
}

/** The generator over `file`, by default the word vectors a bench node uses (BenchServer's MODELS_DIR). */
export const vocabularyText = (seed = 42, file = compactedFile(process.env.MODELS_DIR ?? join(tmpdir(), "engram-models"))): VocabularyText => {
  const words = readVocabulary(file)
  const random = seeded(seed)
  const wordRank = zipf(words.length, random)
  const personRank = zipf(PEOPLE, random)
  const askedRank = zipf(ASKED_PEOPLE, random)
  const placeRank = zipf(PLACES, random)
  const word = () => words[wordRank()]!
  /** A word past the hundred most frequent ("the", "and"...), as a question asking about something names. */
  const topicWord = (): string => {
    const rank = wordRank()
    return rank < 100 ? topicWord() : words[rank]!
  }
  const mention = () => {
    const { first, last } = person(personRank())
    return random() < FIRST_NAME_SHARE ? first : `${first} ${last}`
  }
  const located = () => `${choose(PREPOSITIONS, random)} ${place(placeRank())}`
  const phrases: ReadonlyArray<Phrase> = [[PEOPLE_PER_1000_CHARS, mention], [PLACES_PER_1000_CHARS, located],
    [DATES_PER_1000_CHARS, () => choose(DATES, random)(random)]]
  const chances = slotChances(word, phrases)
  const slot = () => {
    let u = random()
    for (let k = 0; k < phrases.length; k++) if ((u -= chances[k]!) < 0) return phrases[k]![1]()
    return word()
  }
  // Lognormal sentence lengths with the measured mean and spread: many short sentences, a long tail.
  const sigma = Math.sqrt(Math.log(1 + (WORDS_PER_SENTENCE_SD / WORDS_PER_SENTENCE) ** 2))
  const mu = Math.log(WORDS_PER_SENTENCE) - (sigma * sigma) / 2
  const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
  const ending = () => {
    const u = random()
    return u < QUESTION_SHARE ? "?" : u < QUESTION_SHARE + EXCLAMATION_SHARE ? "!" : "."
  }
  const sentence = () => {
    const target = Math.max(1, Math.round(Math.exp(mu + sigma * normal())))
    const parts: Array<string> = []
    for (let count = 0; count < target; ) {
      const part = slot()
      parts.push(part)
      count += part.split(" ").length
    }
    return capital(parts.join(" ")) + ending()
  }
  const turn = (chars: number, speakerLabel = true) => {
    let text = speakerLabel ? `${person(personRank()).first}: ${sentence()}` : sentence()
    while (text.length < chars) text += ` ${sentence()}`
    return text
  }
  const questions: ReadonlyArray<(name: string) => string> = [
    (name) => `What did ${name} say about ${topicWord()}?`,
    (name) => `When did ${name} ${topicWord()} the ${topicWord()}?`,
    (name) => `Did ${name} mention ${topicWord()} or ${topicWord()}?`,
    (name) => `How does ${name} feel about ${topicWord()}?`,
    (name) => `Who told ${name} about the ${topicWord()} ${topicWord()}?`
  ]
  const question = () => {
    const { first, last } = person(askedRank())
    return choose(questions, random)(`${first} ${last}`)
  }
  return { sentence, turn, question }
}

const requireCjs = createRequire(import.meta.url)
const fieldsOf = (value: unknown): Map<string, unknown> => new Map(typeof value === "object" && value !== null ? Object.entries(value) : [])

/** The text of every turn of every session of a LoCoMo file. */
const turnTexts = (file: string): Array<string> => {
  const samples: unknown = JSON.parse(readFileSync(file, "utf8"))
  const texts: Array<string> = []
  for (const sample of Array.isArray(samples) ? samples : []) {
    for (const [key, session] of fieldsOf(fieldsOf(sample).get("conversation"))) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(session)) continue
      for (const text of session.map((turn) => fieldsOf(turn).get("text"))) if (typeof text === "string") texts.push(text)
    }
  }
  return texts
}

/** The rates above, measured again on the turns of `file` (the default is relative to the project root). */
export const measureRates = (file = join("..", "shared", "bench", "locomo-dev.json")) => {
  const nlp: typeof compromise = requireCjs("compromise")
  const dates: typeof datesPlugin = requireCjs("compromise-dates")
  nlp.plugin(dates)
  const texts = turnTexts(file)
  let chars = 0, people = 0, places = 0, dated = 0, sentences = 0, words = 0, squares = 0, questions = 0, exclamations = 0
  for (const text of texts) {
    const doc = nlp<DatesMethods>(text)
    chars += text.length
    people += doc.people().length
    places += doc.places().length
    dated += doc.dates().length
    for (const sentence of doc.sentences().out("array")) {
      if (typeof sentence !== "string") continue
      const count = sentence.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length
      sentences++
      words += count
      squares += count * count
      const end = sentence.trim().at(-1)
      if (end === "?") questions++
      if (end === "!") exclamations++
    }
  }
  const mean = words / sentences
  const fixed = (value: number, digits = 3) => Number(value.toFixed(digits))
  return {
    turns: texts.length, chars, sentences,
    people_per_1000_chars: fixed((people / chars) * 1000), places_per_1000_chars: fixed((places / chars) * 1000),
    dates_per_1000_chars: fixed((dated / chars) * 1000),
    words_per_sentence: fixed(mean, 2), words_per_sentence_sd: fixed(Math.sqrt(squares / sentences - mean * mean), 2),
    question_share: fixed(questions / sentences), exclamation_share: fixed(exclamations / sentences)
  }
}

if (process.argv[1] === import.meta.filename && process.argv.includes("--measure")) console.log(measureRates())
if (process.argv[1] === import.meta.filename && process.argv.includes("--sample")) {
  const text = vocabularyText()
  for (const make of [text.sentence, () => text.turn(1000), text.question]) for (let i = 0; i < 5; i++) console.log(make())
}
