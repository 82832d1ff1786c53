/**
 * A space's words, each stored once and numbered, with what every part of
 * recall reads off a word worked out once: its BM25 term, and the word whose
 * vector soft matching compares. A memory's text is kept in the index as the
 * numbers of its words (`packWords`), a few bytes each: keyword postings,
 * soft matching, a derived sentence vector and the index's snapshot all come
 * from that one sequence, so an index built from text and one read back from
 * a snapshot are the same index.
 */
import type { WordVectors } from "./SoftMatch.ts"
import { isStopword, stem, words } from "./Text.ts"

/** A word's share of a sentence vector (an embedder's `wordPart`): the sentence is the normalised sum of its words' parts. */
export interface WordPart {
  readonly weight: number
  readonly vector: Float32Array
}

/** The number written between a text's words and its keyword-only words (never a word's). */
export const SEPARATOR = 0

const bareOf = (word: string) => word.replace(/'(s|t|re|ve|ll|d|m)$/, "")

export class Lexicon {
  private readonly ids = new Map<string, number>()
  private readonly list: Array<string> = [""]
  /** The BM25 term of each word (`terms` of Text.ts, one word at a time), as a term number; 0 for a stopword. */
  private termOfWord = new Int32Array(1024)
  private readonly termIds = new Map<string, number>()
  private readonly termList: Array<string> = [""]
  /** The bare form soft matching compares (`contentWords`), as a word number; 0 when the word takes no part. */
  private readonly softList: Array<number> = [0]
  /** Each soft word's unit vector, looked up once (undefined: not yet; null: none). */
  private readonly vectorList: Array<Float32Array | null | undefined> = [null]
  /** Each word's part of a sentence vector, looked up once (undefined: not yet; null: none). */
  private readonly partList: Array<WordPart | null | undefined> = [null]

  constructor(
    private readonly wordVectors?: WordVectors,
    private readonly wordPart?: (word: string) => WordPart | undefined
  ) {}

  get size() {
    return this.list.length - 1
  }

  /** The number of `word`, given one now if it is new. */
  idOf(word: string): number {
    let id = this.ids.get(word)
    if (id !== undefined) return id
    id = this.list.length
    this.ids.set(word, id)
    this.list.push(word)
    if (id >= this.termOfWord.length) {
      const grown = new Int32Array(this.termOfWord.length * 2)
      grown.set(this.termOfWord)
      this.termOfWord = grown
    }
    this.termOfWord[id] = isStopword(word) ? 0 : this.termIdOf(stem(bareOf(word)), true)!
    this.softList.push(0)
    this.vectorList.push(undefined)
    this.partList.push(undefined)
    const bare = bareOf(word)
    if (bare.length > 1 && !isStopword(word) && !isStopword(bare)) this.softList[id] = bare === word ? id : this.idOf(bare)
    return id
  }

  /** The number of `word` if the lexicon has it. */
  find(word: string): number | undefined {
    return this.ids.get(word)
  }

  word(id: number): string {
    return this.list[id]!
  }

  /** The BM25 term number of word `id`; 0 for a stopword. */
  term(id: number): number {
    return this.termOfWord[id]!
  }

  /** Every word's term number (`term`), by word number: the lexicon's own array, valid until a word is added. */
  get termsByWord(): Int32Array {
    return this.termOfWord
  }

  /** Every word's term number (`term`), by word number, in an array of its own. */
  termTable(): Int32Array<ArrayBuffer> {
    return this.termOfWord.slice(0, this.list.length)
  }

  /** How many distinct terms there are (term numbers run from 1). */
  get terms() {
    return this.termList.length - 1
  }

  /** The number of a BM25 term, given one now with `add` if it is new. */
  termIdOf(term: string, add = false): number | undefined {
    let id = this.termIds.get(term)
    if (id === undefined && add) {
      id = this.termList.length
      this.termIds.set(term, id)
      this.termList.push(term)
    }
    return id
  }

  /** Word `id`'s part of a sentence vector, when the embedder makes vectors from words and knows it. */
  part(id: number): WordPart | undefined {
    let part = this.partList[id]
    if (part === undefined) this.partList[id] = part = this.wordPart?.(this.list[id]!) ?? null
    return part ?? undefined
  }

  /** The word number soft matching reads for `id` (its bare form), or 0. */
  softWord(id: number): number {
    return this.softList[id]!
  }

  /** The unit vector of a soft word number, when the word vectors know it. */
  vector(softId: number): Float32Array | undefined {
    let vector = this.vectorList[softId]
    if (vector === undefined) this.vectorList[softId] = vector = this.wordVectors?.(this.list[softId]!) ?? null
    return vector ?? undefined
  }

  /** The numbers of a text's words, in order (`words` of Text.ts). */
  encode(text: string): Array<number> {
    return words(text).map((word) => this.idOf(word))
  }

  /** Every word, in number order (number 1 first): what a snapshot stores. */
  allWords(): ReadonlyArray<string> {
    return this.list.slice(1)
  }
}

/** Appends `value` (a non-negative integer) as a LEB128 varint. */
export const writeVarint = (out: Array<number>, value: number) => {
  let rest = value
  while (rest >= 0x80) {
    out.push((rest & 0x7f) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  out.push(rest)
}

/**
 * A memory's words as bytes: the text's word numbers, then SEPARATOR and the
 * keyword-only words' numbers (varints).
 */
export const packWords = (text: ReadonlyArray<number>, extra: ReadonlyArray<number>): Uint8Array => {
  const out: Array<number> = []
  for (const id of text) writeVarint(out, id)
  if (extra.length > 0) {
    out.push(SEPARATOR)
    for (const id of extra) writeVarint(out, id)
  }
  return Uint8Array.from(out)
}

/**
 * The word numbers of packed bytes `[from, to)`, in order, written into `out`
 * from its start (a larger array answered when it is too small): `[how many,
 * the array]`. With `textOnly`, only the text's (those before the separator);
 * the separator itself is never given. No call per word: this runs for every
 * document a snapshot brings back.
 */
export const wordNumbers = (bytes: Uint8Array, from: number, to: number, out: Int32Array, textOnly: boolean): readonly [number, Int32Array] => {
  // At most one word a byte.
  if (to - from > out.length) out = new Int32Array(Math.max(out.length * 2, to - from))
  let count = 0
  let value = 0
  let scale = 1
  for (let i = from; i < to; i++) {
    const byte = bytes[i]!
    value += (byte & 0x7f) * scale
    if (byte & 0x80) {
      scale *= 0x80
      continue
    }
    if (value === SEPARATOR) {
      if (textOnly) break
    } else out[count++] = value
    value = 0
    scale = 1
  }
  return [count, out]
}

/**
 * The BM25 terms of packed bytes `[from, to)`, in order, stopwords left out:
 * `termOfWord` gives each word number's term (0 for a stopword). Written into
 * `out` from its start; `words` is scratch for the word numbers. Answers
 * `[how many, out, words]`, either array replaced by a larger one when too small.
 */
export const termNumbers = (
  bytes: Uint8Array,
  from: number,
  to: number,
  termOfWord: Int32Array,
  words: Int32Array,
  out: Int32Array
): readonly [number, Int32Array, Int32Array] => {
  const [count, numbers] = wordNumbers(bytes, from, to, words, false)
  if (count > out.length) out = new Int32Array(Math.max(out.length * 2, count))
  let length = 0
  for (let k = 0; k < count; k++) {
    const term = termOfWord[numbers[k]!]!
    if (term !== 0) out[length++] = term
  }
  return [length, out, numbers]
}

/** Whether two packed word sequences are the same. */
export const samePacked = (a: Uint8Array, aFrom: number, aTo: number, b: Uint8Array) => {
  if (aTo - aFrom !== b.length) return false
  for (let i = 0; i < b.length; i++) if (a[aFrom + i] !== b[i]) return false
  return true
}
