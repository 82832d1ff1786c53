/**
 * What every format's parser shares: the section and location types, the Parser signature,
 * and the text, table and heading helpers that turn extracted text into sections.
 */
import { Data, Effect, type Scope } from "effect"
import { createRequire } from "node:module"
import type { DocumentFormat } from "../Formats.ts"

export interface Location {
  readonly page?: number
  readonly sheet?: string
  readonly row?: number
  /** Last row of a chunk of table rows (set by chunking). */
  readonly row_end?: number
  readonly slide?: number
  readonly heading_path?: ReadonlyArray<string>
  readonly ocr?: boolean
}

export interface Section {
  readonly text: string
  readonly location: Location
  readonly table: boolean
}

export interface ParsedDocument {
  readonly format: DocumentFormat
  readonly sections: ReadonlyArray<Section>
  readonly units: { readonly kind: "pages" | "slides" | "rows" | "sections" | "seconds"; readonly count: number }
  readonly ocrPages: number
  readonly textLength: number
}

export class ParseError extends Data.TaggedError("ParseError")<{ readonly message: string }> {}

export interface ParseOptions {
  /** A writable directory where the OCR engine keeps its unpacked language data. */
  readonly cachePath: string
  readonly onProgress?: (done: number, total: number) => void
  /** Defaults to `pocketsphinx_continuous` and `ffmpeg` found on PATH. */
  readonly transcriber?: { readonly pocketsphinx: string; readonly ffmpeg: string }
}

export interface Extracted {
  readonly sections: ReadonlyArray<Section>
  readonly units: ParsedDocument["units"]
  readonly ocrPages: number
}

export type Fail = (cause: unknown) => ParseError
export type Parser = (bytes: Uint8Array, options: ParseOptions, fail: Fail) => Effect.Effect<Extracted, ParseError, Scope.Scope>

export const describe = (cause: unknown): string => {
  const text = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : String(cause)
  const line = text.replace(/\s+/g, " ").trim() || "unknown error"
  return line.length > 300 ? `${line.slice(0, 300)}...` : line
}

export const attempt = <A>(fail: Fail, run: () => Promise<A> | A): Effect.Effect<A, ParseError> =>
  Effect.tryPromise({ try: async () => run(), catch: fail })

export const tidy = (text: string): string =>
  text
    .replace(/\r\n?/g, "\n")
    .replace(/[\u00a0\t\f\v ]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

export const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

export const prose = (text: string, location: Location): Array<Section> => {
  const clean = tidy(text)
  return clean === "" ? [] : [{ text: clean, location, table: false }]
}

export const decodeText = (bytes: Uint8Array): string => {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2))
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2))
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return new TextDecoder("windows-1252").decode(bytes)
  }
}

export const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** A table row as one line that keeps its header: `Name: Alice | City: Paris`. */
export const rowSections = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<{ readonly cells: ReadonlyArray<string>; readonly row: number }>,
  location: Location,
  columnName: (index: number) => string = (index) => `Column ${index + 1}`
): Array<Section> =>
  rows.flatMap(({ cells, row }) => {
    const pairs = cells.flatMap((cell, i) => {
      const value = oneLine(cell)
      return value === "" ? [] : [`${oneLine(header[i] ?? "") || columnName(i)}: ${value}`]
    })
    return pairs.length === 0 ? [] : [{ text: pairs.join(" | "), location: { ...location, row }, table: true }]
  })

/** The headings above the current point of a document, outermost first. */
export const headingTrail = () => {
  const stack: Array<{ readonly level: number; readonly text: string }> = []
  return {
    enter: (level: number, text: string) => {
      while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop()
      const title = oneLine(text)
      if (title !== "") stack.push({ level, text: title })
    },
    location: (): Location => (stack.length === 0 ? {} : { heading_path: stack.map((h) => h.text) })
  }
}

export const bySections = (sections: ReadonlyArray<Section>, options: ParseOptions): Extracted => {
  options.onProgress?.(1, 1)
  return { sections, units: { kind: "sections", count: sections.length }, ocrPages: 0 }
}

export const u32 = (data: Uint8Array, at: number) => at + 4 <= data.length ? (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0 : 0

export const requireCjs = createRequire(import.meta.url)
