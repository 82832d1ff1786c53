/**
 * Uploaded files -> sections of text that keep their place in the document
 * (page, slide, sheet and row, heading path). Everything runs offline; every
 * failure of a library or of the file becomes a ParseError with a message a
 * person can act on.
 *
 * Each format family has its module under parsers/ (Pdf, Word, Slides, Sheets,
 * Markup, Image, Audio), sharing the types and helpers of parsers/Shared.ts and
 * the OCR engine of parsers/Ocr.ts; this file is the layer's single parsing entry.
 */
import { Effect } from "effect"
import { detectFormat, type DocumentFormat, readCompoundFile, zipEntries } from "./Formats.ts"
import { parseAudio } from "./parsers/Audio.ts"
import { parseImage } from "./parsers/Image.ts"
import { parseHtml, parseMarkdown, parseText } from "./parsers/Markup.ts"
import { parsePdf } from "./parsers/Pdf.ts"
import { describe, type Fail, ParseError, type ParsedDocument, type ParseOptions, type Parser } from "./parsers/Shared.ts"
import { parseCsv, parseWorkbook } from "./parsers/Sheets.ts"
import { parsePpt, parsePptx } from "./parsers/Slides.ts"
import { parseDoc, parseDocx } from "./parsers/Word.ts"

export { htmlSections, markdownSections } from "./parsers/Markup.ts"
export { type Location, type ParsedDocument, ParseError, type ParseOptions, type Section } from "./parsers/Shared.ts"
export { pptSlides } from "./parsers/Slides.ts"

const LABELS: Record<DocumentFormat, string> = {
  pdf: "PDF",
  docx: "Word document (DOCX)",
  doc: "Word document (DOC)",
  pptx: "PowerPoint presentation (PPTX)",
  ppt: "PowerPoint presentation (PPT)",
  xlsx: "Excel workbook (XLSX)",
  xls: "Excel workbook (XLS)",
  csv: "CSV file",
  html: "HTML page",
  txt: "text file",
  markdown: "Markdown file",
  jpg: "JPEG image",
  png: "PNG image",
  mp3: "MP3 audio file",
  wav: "WAV audio file"
}

const PARSERS: Record<DocumentFormat, Parser> = {
  pdf: parsePdf,
  docx: parseDocx,
  doc: parseDoc,
  pptx: parsePptx,
  ppt: parsePpt,
  xlsx: parseWorkbook,
  xls: parseWorkbook,
  csv: parseCsv,
  html: parseHtml,
  txt: parseText,
  markdown: parseMarkdown,
  jpg: parseImage,
  png: parseImage,
  mp3: parseAudio,
  wav: parseAudio
}

const unsupported = (bytes: Uint8Array, filename: string) => {
  const name = filename === "" ? "the file" : filename
  const compound = readCompoundFile(bytes)
  if (compound?.names.some((n) => n.toLowerCase() === "encryptedpackage")) {
    return `unsupported format: ${name} is a password-protected Office file; upload an unprotected copy`
  }
  if (compound !== undefined) return `unsupported format: ${name} is an OLE2 file that is not a Word, PowerPoint or Excel document`
  if (zipEntries(bytes).length > 0) return `unsupported format: ${name} is a zip archive that is not a DOCX, PPTX or XLSX document`
  return `unsupported format: ${name} is not a PDF, Office document, spreadsheet, CSV, HTML, Markdown, text, JPG/PNG image or MP3/WAV file`
}

export const parseDocument: (
  bytes: Uint8Array,
  filename: string,
  contentType: string | undefined,
  options: ParseOptions
) => Effect.Effect<ParsedDocument, ParseError> = Effect.fn("Parsers.parseDocument")(function* (bytes, filename, contentType, options) {
  const format = detectFormat(bytes, filename, contentType)
  if (bytes.length === 0) return yield* new ParseError({ message: "this file is empty" })
  if (format === undefined) return yield* new ParseError({ message: unsupported(bytes, filename) })
  yield* Effect.annotateCurrentSpan({ format, bytes: bytes.length })
  const label = LABELS[format]
  const fail: Fail = (cause) => new ParseError({ message: `this file is not a readable ${label}: ${describe(cause)}` })
  const extracted = yield* PARSERS[format](bytes, options, fail).pipe(
    Effect.scoped,
    Effect.catchAllDefect((defect) => Effect.fail(fail(defect)))
  )
  const sections = extracted.sections.filter((section) => section.text.trim() !== "")
  if (sections.length === 0) {
    const why = format === "jpg" || format === "png" ? " (OCR found no readable text)" : format === "mp3" || format === "wav" ? " (no speech was recognised)" : ""
    return yield* new ParseError({ message: `no text found in this ${label}${why}` })
  }
  return {
    format,
    sections,
    units: extracted.units,
    ocrPages: extracted.ocrPages,
    textLength: sections.reduce((sum, section) => sum + section.text.length, 0)
  }
})
