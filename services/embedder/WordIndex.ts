/**
 * A read-only word -> row lookup over one string of newline-separated words:
 * an open-addressing hash table of row numbers in an Int32Array, the words
 * themselves left in the vocabulary string. For the 200,000-word vocabulary
 * of the word vectors it holds about 4 MB where a Map of 200,000 strings held
 * about 57 MB of heap. A word listed twice answers its last row (as a Map would).
 */

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

const hashRange = (text: string, from: number, to: number) => {
  let h = FNV_OFFSET
  for (let i = from; i < to; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME)
  return h >>> 0
}

export interface WordIndex {
  readonly size: number
  readonly get: (word: string) => number | undefined
}

export const makeWordIndex = (vocabulary: string): WordIndex => {
  const starts: Array<number> = [0]
  for (let i = 0; i < vocabulary.length; i++) if (vocabulary.charCodeAt(i) === 10) starts.push(i + 1)
  const count = starts.length
  const bounds = new Uint32Array(count + 1)
  bounds.set(starts)
  bounds[count] = vocabulary.length + 1
  let capacity = 1
  while (capacity < count * 2) capacity *= 2
  const mask = capacity - 1
  const table = new Int32Array(capacity).fill(-1)

  const sameWord = (row: number, word: string, from = 0, to = word.length) => {
    const start = bounds[row]!
    const length = bounds[row + 1]! - 1 - start
    if (length !== to - from) return false
    for (let i = 0; i < length; i++) if (vocabulary.charCodeAt(start + i) !== word.charCodeAt(from + i)) return false
    return true
  }

  for (let row = 0; row < count; row++) {
    const start = bounds[row]!
    const end = bounds[row + 1]! - 1
    let slot = hashRange(vocabulary, start, end) & mask
    for (;;) {
      const held = table[slot]!
      if (held === -1 || sameWord(held, vocabulary, start, end)) {
        table[slot] = row
        break
      }
      slot = (slot + 1) & mask
    }
  }

  return {
    size: count,
    get: (word) => {
      let slot = hashRange(word, 0, word.length) & mask
      for (;;) {
        const row = table[slot]!
        if (row === -1) return undefined
        if (sameWord(row, word)) return row
        slot = (slot + 1) & mask
      }
    }
  }
}
