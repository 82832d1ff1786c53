/**
 * Sections -> chunks to store as memories. Prose is cut at paragraph, line,
 * sentence and word boundaries; table rows of one table are packed together,
 * one row a line. Nothing is merged across a page, slide, sheet or heading.
 */
import type { Location, ParsedDocument, Section } from "./Parsers.ts"

export interface Chunk {
  readonly text: string
  readonly location: Location
}

/** Coarsest first: a text is cut at the first of these that makes its pieces fit. */
const BOUNDARIES: ReadonlyArray<{ readonly pattern: RegExp; readonly joiner: string }> = [
  { pattern: /\n[ \t]*\n\s*/, joiner: "\n\n" },
  { pattern: /\n\s*/, joiner: "\n" },
  { pattern: /(?<=[.!?…]["'”’)\]]*)\s+/, joiner: " " },
  { pattern: /\s+\|\s+/, joiner: " | " },
  { pattern: /(?<=[;:,])\s+/, joiner: " " },
  { pattern: /\s+/, joiner: " " }
]

/** A single word longer than the limit is the only thing ever cut inside. */
const cutWord = (word: string, max: number): Array<string> => {
  const characters = Array.from(word)
  const pieces: Array<string> = []
  for (let i = 0; i < characters.length; i += max) pieces.push(characters.slice(i, i + max).join(""))
  return pieces
}

/** Pieces of at most `max` characters, each as large as the boundaries allow. */
export const splitText = (text: string, max: number, level = 0): Array<string> => {
  const trimmed = text.trim()
  if (trimmed.length <= max) return trimmed === "" ? [] : [trimmed]
  const boundary = BOUNDARIES[level]
  if (boundary === undefined) return cutWord(trimmed, max)
  const parts = trimmed.split(boundary.pattern).filter((part) => part.trim() !== "")
  if (parts.length <= 1) return splitText(trimmed, max, level + 1)
  const pieces: Array<string> = []
  let current = ""
  for (const part of parts) {
    for (const piece of splitText(part, max, level + 1)) {
      if (current === "") current = piece
      else if (current.length + boundary.joiner.length + piece.length <= max) current += boundary.joiner + piece
      else {
        pieces.push(current)
        current = piece
      }
    }
  }
  if (current !== "") pieces.push(current)
  return pieces
}

const withoutRow = ({ row: _row, row_end: _end, ...rest }: Location): Location => rest

const placeKey = (location: Location) => JSON.stringify(withoutRow(location), Object.keys(withoutRow(location)).sort())

/** Table rows of one table, one a line, packed up to `max`; a row longer than that is split on its own. */
const packRows = (rows: ReadonlyArray<Section>, max: number): Array<Chunk> => {
  const chunks: Array<Chunk> = []
  let lines: Array<string> = []
  let length = 0
  let first: Section | undefined
  let last: Section | undefined
  const flush = () => {
    if (first !== undefined && last !== undefined) chunks.push({ text: lines.join("\n"), location: rowRange(first, last) })
    lines = []
    length = 0
    first = last = undefined
  }
  for (const row of rows) {
    const text = row.text.trim()
    if (text === "") continue
    if (text.length > max) {
      flush()
      for (const piece of splitText(text, max)) chunks.push({ text: piece, location: rowRange(row, row) })
      continue
    }
    if (first !== undefined && length + 1 + text.length > max) flush()
    lines.push(text)
    length += (lines.length > 1 ? 1 : 0) + text.length
    first ??= row
    last = row
  }
  flush()
  return chunks
}

const rowRange = (first: Section, last: Section): Location => {
  const start = first.location.row
  if (start === undefined) return withoutRow(first.location)
  return { ...withoutRow(first.location), row: start, row_end: last.location.row ?? start }
}

const packProse = (sections: ReadonlyArray<Section>, max: number): Array<Chunk> => {
  const location = sections[0]?.location ?? {}
  return splitText(sections.map((section) => section.text.trim()).join("\n\n"), max).map((text) => ({ text, location }))
}

/** Consecutive sections that `sameGroup` keeps together. */
const groupsOf = (sections: ReadonlyArray<Section>, sameGroup: (previous: Section, next: Section) => boolean) => {
  const groups: Array<Array<Section>> = []
  for (const section of sections) {
    const group = groups[groups.length - 1]
    const previous = group?.[group.length - 1]
    if (group !== undefined && previous !== undefined && sameGroup(previous, section)) group.push(section)
    else groups.push([section])
  }
  return groups
}

/** Rows of one table follow each other in increasing order; a new table (or sheet) starts over. */
const sameTable = (previous: Section, next: Section) =>
  previous.table && next.table && placeKey(previous.location) === placeKey(next.location) &&
  (previous.location.row === undefined || next.location.row === undefined || next.location.row > previous.location.row)

export const chunkSections = (sections: ReadonlyArray<Section>, maxChars = 1200): Array<Chunk> =>
  groupsOf(sections, (previous, next) =>
    previous.table ? sameTable(previous, next) : !next.table && placeKey(previous.location) === placeKey(next.location))
    .flatMap((group) => (group[0]?.table ? packRows(group, maxChars) : packProse(group, maxChars)))

/** Where a page-sized group is: its page, slide or sheet, else its heading path. */
const pageKey = ({ page, slide, sheet, heading_path }: Location) =>
  JSON.stringify(page !== undefined || slide !== undefined || sheet !== undefined ? [page, slide, sheet] : [heading_path ?? []])

/** One chunk per page, slide, sheet (or heading, for documents without pages), split only beyond four times the limit. */
export const pageChunks = (sections: ReadonlyArray<Section>, maxChars = 1200): Array<Chunk> =>
  groupsOf(sections, (previous, next) => pageKey(previous.location) === pageKey(next.location)).flatMap((group) => {
    const max = maxChars * 4
    if (group.every((section) => section.table)) return packRows(group, max)
    const first = group[0]
    if (first === undefined) return []
    const location = group.some((section) => section.location.ocr === true) ? { ...withoutRow(first.location), ocr: true } : withoutRow(first.location)
    const text = group.map((section, i) => (i === 0 ? "" : section.table && group[i - 1]!.table ? "\n" : "\n\n") + section.text.trim()).join("")
    return splitText(text, max).map((piece) => ({ text: piece, location }))
  })

export const strategies = {
  chunks: chunkSections,
  pages: pageChunks
} satisfies Record<string, (sections: ReadonlyArray<Section>, maxChars?: number) => Array<Chunk>>

export const chunkDocument = (parsed: ParsedDocument, strategy: "chunks" | "pages"): Array<Chunk> =>
  strategies[strategy](parsed.sections)
