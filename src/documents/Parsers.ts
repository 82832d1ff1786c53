/**
 * Uploaded files -> sections of text that keep their place in the document
 * (page, slide, sheet and row, heading path). Everything runs offline; every
 * failure of a library or of the file becomes a ParseError with a message a
 * person can act on.
 *
 * One module per format would read better; they share the section, table and
 * heading helpers below, and this file is the layer's single parsing entry.
 */
import { Data, Effect, type Scope } from "effect"
import { convert, type DomNode, type FormatCallback } from "html-to-text"
import mammoth from "mammoth"
import { lexer, type Token, type Tokens } from "marked"
import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import { constants } from "node:fs"
import { access, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { promisify } from "node:util"
import { gunzip } from "node:zlib"
import { type OfficeContentNode, OfficeParser } from "officeparser"
import { PNG } from "pngjs"
import { createWorker, OEM, type Worker } from "tesseract.js"
import { getDocumentProxy, getResolvedPDFJS } from "unpdf"
import * as XLSX from "xlsx"
import { yieldToIo } from "../../services/EventLoop.ts"
import { type CompoundFile, detectFormat, type DocumentFormat, readCompoundFile, zipEntries } from "./Formats.ts"

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

interface Extracted {
  readonly sections: ReadonlyArray<Section>
  readonly units: ParsedDocument["units"]
  readonly ocrPages: number
}

type Fail = (cause: unknown) => ParseError
type Parser = (bytes: Uint8Array, options: ParseOptions, fail: Fail) => Effect.Effect<Extracted, ParseError, Scope.Scope>

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

// ---------------------------------------------------------------- shared helpers

const describe = (cause: unknown): string => {
  const text = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : String(cause)
  const line = text.replace(/\s+/g, " ").trim() || "unknown error"
  return line.length > 300 ? `${line.slice(0, 300)}...` : line
}

const attempt = <A>(fail: Fail, run: () => Promise<A> | A): Effect.Effect<A, ParseError> =>
  Effect.tryPromise({ try: async () => run(), catch: fail })

const tidy = (text: string): string =>
  text
    .replace(/\r\n?/g, "\n")
    .replace(/[\u00a0\t\f\v ]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

const prose = (text: string, location: Location): Array<Section> => {
  const clean = tidy(text)
  return clean === "" ? [] : [{ text: clean, location, table: false }]
}

const decodeText = (bytes: Uint8Array): string => {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2))
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2))
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return new TextDecoder("windows-1252").decode(bytes)
  }
}

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** A table row as one line that keeps its header: `Name: Alice | City: Paris`. */
const rowSections = (
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
const headingTrail = () => {
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

// ---------------------------------------------------------------- OCR

const requireCjs = createRequire(import.meta.url)
const gunzipAsync = promisify(gunzip)

/**
 * The English model, unpacked once into the caller's cache directory and renamed into place
 * whole. tesseract.js is pointed at that copy and caches nothing itself: a model file it left
 * half-written (its cache is written in place) makes a later worker crash the process.
 */
const ocrModel = async (cachePath: string) => {
  const dir = join(cachePath, "tesseract-eng-4.0.0_best_int")
  const model = join(dir, "eng.traineddata")
  if (await access(model).then(() => true, () => false)) return dir
  const packaged = join(dirname(requireCjs.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int", "eng.traineddata.gz")
  await mkdir(dir, { recursive: true })
  const partial = `${model}.${randomUUID()}.partial`
  try {
    await writeFile(partial, await gunzipAsync(await readFile(packaged)))
    await rename(partial, model)
  } finally {
    await rm(partial, { force: true })
  }
  return dir
}

type Recognize = (image: Uint8Array, fail: Fail) => Effect.Effect<string, ParseError, Scope.Scope>

/** One tesseract worker for the whole parse, started on first use and terminated with the parse's scope. */
const lazyOcr = (cachePath: string): Effect.Effect<Recognize> =>
  Effect.map(
    Effect.cached(
      Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const langPath = await ocrModel(cachePath)
            // Without an errorHandler tesseract.js rethrows worker errors from a message handler, crashing the process.
            return createWorker("eng", OEM.LSTM_ONLY, { langPath, cachePath: langPath, gzip: false, cacheMethod: "none", logger: () => {}, errorHandler: () => {} })
          },
          catch: (cause) => new ParseError({ message: `the OCR engine could not start: ${describe(cause)}` })
        }),
        (worker: Worker) => Effect.tryPromise(() => worker.terminate()).pipe(Effect.ignore)
      )
    ),
    (worker) => (image, fail) =>
      Effect.flatMap(worker, (w) => attempt(fail, async () => tidy((await w.recognize(asBuffer(image))).data.text)))
  )

const parseImage: Parser = (bytes, options, fail) =>
  Effect.gen(function* () {
    const recognize = yield* lazyOcr(options.cachePath)
    const text = yield* recognize(bytes, fail)
    options.onProgress?.(1, 1)
    return { sections: prose(text, { ocr: true }), units: { kind: "pages", count: 1 }, ocrPages: 1 }
  })

// ---------------------------------------------------------------- PDF

/**
 * pdf.js (bundled in unpdf) exports fonts through ArrayBuffer.prototype.transferToFixedLength,
 * which Node 20 lacks: a page with both text and images then loses its images, so a scanned
 * page with a printed page number would never be OCR'd. A copying stand-in is enough for it.
 */
const ensureTransferToFixedLength = () => {
  if (Reflect.has(ArrayBuffer.prototype, "transferToFixedLength")) return
  Object.defineProperty(ArrayBuffer.prototype, "transferToFixedLength", {
    configurable: true,
    writable: true,
    value: function (this: ArrayBuffer, length: number = this.byteLength) {
      const copy = new ArrayBuffer(length)
      new Uint8Array(copy).set(new Uint8Array(this, 0, Math.min(length, this.byteLength)))
      return copy
    }
  })
}

type PdfDocument = Awaited<ReturnType<typeof getDocumentProxy>>
type PdfPage = Awaited<ReturnType<PdfDocument["getPage"]>>

const pageText = async (page: PdfPage) => {
  const content = await page.getTextContent()
  return tidy(content.items.map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : "")).join(""))
}

/** A text layer this thin (a page number, a stamp) means the page is a scan. */
const hasTextLayer = (text: string) => text.replace(/[^\p{L}\p{N}]/gu, "").length >= 16

/**
 * A decoded page image as PNG, told by its size: 1 bit a pixel (CCITT and JBIG2 scans, image
 * masks; a set bit is white), grey, RGB or RGBA. unpdf's extractImages skips 1-bit images,
 * which most office scanners produce for black and white pages.
 */
const imagePng = (image: unknown): Uint8Array | undefined => {
  if (!isRecord(image)) return undefined
  const { width, height, data } = image
  if (typeof width !== "number" || typeof height !== "number" || !(data instanceof Uint8Array || data instanceof Uint8ClampedArray)) return undefined
  if (width < 32 || height < 16) return undefined
  const png = new PNG({ width, height })
  const pixels = width * height
  const rowBytes = Math.ceil(width / 8)
  const channels = data.length === rowBytes * height ? 0 : data.length / pixels
  if (channels !== 0 && channels !== 1 && channels !== 3 && channels !== 4) return undefined
  for (let pixel = 0; pixel < pixels; pixel++) {
    const to = pixel * 4
    if (channels === 0) {
      const x = pixel % width
      const bit = (data[Math.floor(pixel / width) * rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1
      png.data.fill(bit === 1 ? 255 : 0, to, to + 3)
      png.data[to + 3] = 255
    } else {
      const from = pixel * channels
      png.data[to] = data[from]!
      png.data[to + 1] = data[channels >= 3 ? from + 1 : from]!
      png.data[to + 2] = data[channels >= 3 ? from + 2 : from]!
      png.data[to + 3] = channels === 4 ? data[from + 3]! : 255
    }
  }
  return PNG.sync.write(png)
}

/** The images a page paints, in drawing order, as PNG. */
const pageImages = async (page: PdfPage): Promise<Array<Uint8Array>> => {
  const { OPS } = await getResolvedPDFJS()
  const list = await page.getOperatorList()
  const images: Array<Uint8Array> = []
  for (const [i, op] of list.fnArray.entries()) {
    const args: unknown = list.argsArray[i]
    const first: unknown = Array.isArray(args) ? args[0] : undefined
    let image: unknown
    if ((op === OPS.paintImageXObject || op === OPS.paintImageXObjectRepeat) && typeof first === "string") {
      const store = first.startsWith("g_") ? page.commonObjs : page.objs
      // Painted images are resolved by the time the operator list is; the timer only guards against a pdf.js bug.
      image = await new Promise<unknown>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), 30_000)
        store.get(first, (data: unknown) => {
          clearTimeout(timer)
          resolve(data)
        })
      })
    } else if (op === OPS.paintInlineImageXObject || op === OPS.paintImageMaskXObject) {
      image = first
    }
    const png = imagePng(image)
    if (png !== undefined) images.push(png)
  }
  return images
}

const pdfFailure = (fail: Fail) => (cause: unknown) =>
  isRecord(cause) && cause["name"] === "PasswordException"
    ? new ParseError({ message: "this PDF is password-protected; upload an unprotected copy" })
    : fail(cause)

/** A page's text layer, or what OCR reads in its images when the layer is (nearly) empty. */
const readPage = (page: PdfPage, recognize: Recognize, fail: Fail) =>
  Effect.gen(function* () {
    const number = page.pageNumber
    const text = yield* attempt(fail, () => pageText(page))
    if (hasTextLayer(text)) return { sections: prose(text, { page: number }), ocr: false }
    // Images that cannot be decoded leave the page to its text layer rather than failing the file.
    const images = yield* attempt(fail, () => pageImages(page)).pipe(Effect.orElseSucceed((): Array<Uint8Array> => []))
    const readings: Array<string> = []
    for (const image of images) {
      readings.push(yield* recognize(image, (cause) => fail(`OCR failed on page ${number}: ${describe(cause)}`)))
    }
    const scanned = tidy(readings.join("\n\n"))
    return scanned === ""
      ? { sections: prose(text, { page: number }), ocr: false }
      : { sections: prose(scanned, { page: number, ocr: true }), ocr: true }
  })

const parsePdf: Parser = (bytes, options, fail) =>
  Effect.gen(function* () {
    ensureTransferToFixedLength()
    const pdf = yield* Effect.acquireRelease(
      // pdf.js takes ownership of (detaches) the array it is given and refuses a Buffer: hand it a plain copy.
      attempt(pdfFailure(fail), () => getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 })),
      (doc) => Effect.tryPromise(() => doc.destroy()).pipe(Effect.ignore)
    )
    const recognize = yield* lazyOcr(options.cachePath)
    const total = pdf.numPages
    const sections: Array<Section> = []
    let ocrPages = 0
    for (let number = 1; number <= total; number++) {
      const page = yield* attempt(fail, () => pdf.getPage(number))
      const read = yield* readPage(page, recognize, fail).pipe(Effect.ensuring(Effect.sync(() => page.cleanup())))
      sections.push(...read.sections)
      if (read.ocr) ocrPages++
      options.onProgress?.(number, total)
      yield* yieldToIo
    }
    return { sections, units: { kind: "pages", count: total }, ocrPages }
  })

// ---------------------------------------------------------------- HTML (and DOCX through mammoth)

const BLOCK_TAGS = new Set(["p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "blockquote", "pre"])

const nodeText = (node: DomNode): string => {
  if (node.type === "text") return node.data ?? ""
  if (node.type !== "tag" || node.name === "script" || node.name === "style") return ""
  const inner = (node.children ?? []).map(nodeText).join("")
  return node.name !== undefined && BLOCK_TAGS.has(node.name) ? ` ${inner} ` : inner
}

const tableRows = (table: DomNode): { readonly rows: Array<Array<string>>; readonly headed: boolean } => {
  const rows: Array<Array<string>> = []
  let headed = false
  const visit = (node: DomNode, inHead: boolean) => {
    for (const child of node.children ?? []) {
      if (child.type !== "tag" || child.name === "table") continue
      if (child.name !== "tr") {
        visit(child, inHead || child.name === "thead")
        continue
      }
      const cells = (child.children ?? []).filter((c) => c.type === "tag" && (c.name === "td" || c.name === "th"))
      if (rows.length === 0 && (inHead || (cells.length > 0 && cells.every((c) => c.name === "th")))) headed = true
      rows.push(cells.flatMap((cell) => {
        const span = Math.min(Math.max(Number(isRecord(cell.attribs) ? cell.attribs["colspan"] : 1) || 1, 1), 50)
        return [oneLine(nodeText(cell)), ...Array.from({ length: span - 1 }, () => "")]
      }))
    }
  }
  visit(table, false)
  return { rows, headed }
}

// Private-use characters mark headings and tables in html-to-text's output.
const MARKERS = /\uE000([1-6])\uE001([^\uE002]*)\uE002|\uE003(\d+)\uE004/g

/** HTML -> prose sections under their heading path, and tables as one section per row with the header kept. */
export const htmlSections = (html: string): Array<Section> => {
  const tables: Array<{ readonly rows: Array<Array<string>>; readonly headed: boolean }> = []
  const heading: FormatCallback = (elem, walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 })
    builder.addLiteral(`\uE000${Number(elem.name?.slice(1)) || 1}\uE001`)
    walk(elem.children, builder)
    builder.addLiteral("\uE002")
    builder.closeBlock({ trailingLineBreaks: 2 })
  }
  const table: FormatCallback = (elem, _walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 })
    builder.addLiteral(`\uE003${tables.length}\uE004`)
    tables.push(tableRows(elem))
    builder.closeBlock({ trailingLineBreaks: 2 })
  }
  const text = convert(html.replace(/[\uE000-\uE004]/g, ""), {
    wordwrap: false,
    // Uploads are capped well below this; html-to-text would otherwise cut long pages at 16M characters.
    limits: { maxInputLength: 1 << 30 },
    formatters: { engramHeading: heading, engramTable: table },
    selectors: [
      ...[1, 2, 3, 4, 5, 6].map((level) => ({ selector: `h${level}`, format: "engramHeading" })),
      { selector: "table", format: "engramTable" },
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" }
    ]
  })
  const sections: Array<Section> = []
  const trail = headingTrail()
  let last = 0
  for (const match of text.matchAll(MARKERS)) {
    sections.push(...prose(text.slice(last, match.index), trail.location()))
    last = match.index + match[0].length
    if (match[1] !== undefined) {
      trail.enter(Number(match[1]), match[2] ?? "")
      continue
    }
    const { rows, headed } = tables[Number(match[3])] ?? { rows: [], headed: false }
    const filled = rows.filter((row) => row.some((cell) => cell !== ""))
    // A lone row, or cells holding whole paragraphs (a table used for layout), read as prose.
    if (filled.length < 2 || (!headed && filled.some((row) => row.some((cell) => cell.length > 400)))) {
      sections.push(...prose(filled.map((row) => row.filter((cell) => cell !== "").join(" | ")).join("\n"), trail.location()))
      continue
    }
    const [header = [], ...body] = rows
    sections.push(...rowSections(header, body.map((cells, i) => ({ cells, row: i + 2 })), trail.location()))
  }
  sections.push(...prose(text.slice(last), trail.location()))
  return sections
}

const bySections = (sections: ReadonlyArray<Section>, options: ParseOptions): Extracted => {
  options.onProgress?.(1, 1)
  return { sections, units: { kind: "sections", count: sections.length }, ocrPages: 0 }
}

const parseHtml: Parser = (bytes, options, fail) =>
  Effect.map(attempt(fail, () => htmlSections(decodeText(bytes))), (sections) => bySections(sections, options))

const parseDocx: Parser = (bytes, options, fail) =>
  Effect.gen(function* () {
    const result = yield* attempt(fail, () =>
      mammoth.convertToHtml(
        { buffer: asBuffer(bytes) },
        // Images carry no text here; skip encoding them into the HTML.
        { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: "" })) }
      ))
    return bySections(yield* attempt(fail, () => htmlSections(result.value)), options)
  })

// ---------------------------------------------------------------- Markdown

const textField = (token: Token): string => ("text" in token && typeof token.text === "string" ? token.text : "")
const isHeading = (token: Token): token is Tokens.Heading => token.type === "heading" && "depth" in token && typeof token.depth === "number"
const isTable = (token: Token): token is Tokens.Table => token.type === "table" && "rows" in token && Array.isArray(token.rows)
const isList = (token: Token): token is Tokens.List => token.type === "list" && "items" in token && Array.isArray(token.items)
const childTokens = (token: Token): ReadonlyArray<Token> => ("tokens" in token && Array.isArray(token.tokens) ? token.tokens : [])

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", "#39": "'", nbsp: " " }
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => entities[name] ?? "")

const inlineText = (tokens: ReadonlyArray<Token>): string =>
  tokens.map((token) => {
    switch (token.type) {
      case "br":
        return "\n"
      case "html":
      case "checkbox":
        return ""
      case "image":
        return textField(token)
      default:
        return childTokens(token).length > 0 ? inlineText(childTokens(token)) : unescape(textField(token))
    }
  }).join("")

const blockText = (token: Token): string => {
  if (token.type === "space" || token.type === "hr" || token.type === "def") return ""
  if (token.type === "code") return textField(token)
  if (token.type === "html") return textField(token).replace(/<[^>]*>/g, " ")
  if (isList(token)) return token.items.map((item) => `- ${blocksText(item.tokens)}`).join("\n")
  if (isTable(token)) return [token.header, ...token.rows].map((row) => row.map((cell) => inlineText(cell.tokens)).join(" | ")).join("\n")
  if (token.type === "blockquote") return blocksText(childTokens(token))
  return childTokens(token).length > 0 ? inlineText(childTokens(token)) : unescape(textField(token))
}

const blocksText = (tokens: ReadonlyArray<Token>) => tokens.map(blockText).filter((text) => text.trim() !== "").join("\n")

export const markdownSections = (source: string): Array<Section> => {
  const sections: Array<Section> = []
  const trail = headingTrail()
  let pending: Array<string> = []
  const flush = () => {
    sections.push(...prose(pending.join("\n\n"), trail.location()))
    pending = []
  }
  for (const token of lexer(source)) {
    if (isHeading(token)) {
      flush()
      trail.enter(token.depth, inlineText(token.tokens))
    } else if (isTable(token)) {
      flush()
      const header = token.header.map((cell) => inlineText(cell.tokens))
      const rows = token.rows.map((row, i) => ({ cells: row.map((cell) => inlineText(cell.tokens)), row: i + 2 }))
      sections.push(...rowSections(header, rows, trail.location()))
    } else {
      pending.push(blockText(token))
    }
  }
  flush()
  return sections
}

const parseMarkdown: Parser = (bytes, options, fail) =>
  Effect.map(attempt(fail, () => markdownSections(decodeText(bytes))), (sections) => bySections(sections, options))

const parseText: Parser = (bytes, options, fail) =>
  Effect.map(
    attempt(fail, () => decodeText(bytes).split(/\r?\n[ \t]*\r?\n/).flatMap((paragraph) => prose(paragraph, {}))),
    (sections) => bySections(sections, options)
  )

// ---------------------------------------------------------------- Spreadsheets and CSV

const cellText = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : ""

/** Every sheet: the first non-empty row is the header; each later row is a section `Header: value | ...`. */
const sheetSections = (workbook: XLSX.WorkBook, options: ParseOptions) =>
  Effect.gen(function* () {
    const sections: Array<Section> = []
    const names = workbook.SheetNames
    for (const [index, sheet] of names.entries()) {
      const worksheet = workbook.Sheets[sheet]
      const ref = worksheet?.["!ref"]
      if (worksheet !== undefined && ref !== undefined) {
        const range = XLSX.utils.decode_range(ref)
        const rows = XLSX.utils.sheet_to_json<Array<unknown>>(worksheet, { header: 1, raw: false, defval: "", blankrows: true })
        let header: Array<string> | undefined
        for (const [i, row] of rows.entries()) {
          const cells = Array.isArray(row) ? row.map(cellText) : []
          if (header === undefined) {
            if (cells.some((cell) => cell.trim() !== "")) header = cells
            continue
          }
          sections.push(...rowSections(header, [{ cells, row: range.s.r + i + 1 }], { sheet }, (column) => XLSX.utils.encode_col(range.s.c + column)))
          if (i % 2000 === 1999) yield* yieldToIo
        }
      }
      options.onProgress?.(index + 1, names.length)
      yield* yieldToIo
    }
    return { sections, units: { kind: "rows", count: sections.length }, ocrPages: 0 } satisfies Extracted
  })

const parseWorkbook: Parser = (bytes, options, fail) =>
  Effect.flatMap(
    attempt(fail, () => XLSX.read(bytes, { type: "array", cellFormula: false, cellHTML: false, cellStyles: false })),
    (workbook) => sheetSections(workbook, options)
  )

const parseCsv: Parser = (bytes, options, fail) =>
  Effect.flatMap(
    // raw: values stay as written (no dates or numbers guessed, leading zeros kept).
    attempt(fail, () => XLSX.read(decodeText(bytes), { type: "string", raw: true })),
    (workbook) => sheetSections(workbook, options)
  )

// ---------------------------------------------------------------- Word 97-2003 (DOC)

/** word-extractor ships no types: its API is checked at run time. */
const wordDocument = async (bytes: Uint8Array) => {
  const Extractor: unknown = requireCjs("word-extractor")
  if (typeof Extractor !== "function") throw new Error("word-extractor is not available")
  const extractor: unknown = Reflect.construct(Extractor, [])
  const extract = isRecord(extractor) ? extractor["extract"] : undefined
  if (typeof extract !== "function") throw new Error("word-extractor is not available")
  const document: unknown = await Reflect.apply(extract, extractor, [asBuffer(bytes)])
  const part = (name: string): string => {
    const getter = isRecord(document) ? document[name] : undefined
    const value: unknown = typeof getter === "function" ? Reflect.apply(getter, document, []) : undefined
    return typeof value === "string" ? value : ""
  }
  return { body: part("getBody"), notes: [part("getFootnotes"), part("getEndnotes")] }
}

/** Word tables come out as tab-separated lines: runs of two or more with the same cell count become rows. */
const wordSections = (body: string): Array<Section> => {
  const sections: Array<Section> = []
  const lines = body.replace(/\r\n?/g, "\n").split("\n")
  let paragraph: Array<string> = []
  const flush = () => {
    sections.push(...prose(paragraph.join("\n"), {}))
    paragraph = []
  }
  for (let i = 0; i < lines.length;) {
    const cells = (line: string) => line.replace(/\t+$/, "").split("\t")
    const width = cells(lines[i]!).length
    let end = i
    while (end < lines.length && width > 1 && cells(lines[end]!).length === width) end++
    if (end - i >= 2) {
      flush()
      const [header = [], ...rows] = lines.slice(i, end).map(cells)
      sections.push(...rowSections(header, rows.map((row, k) => ({ cells: row, row: k + 2 })), {}))
      i = end
    } else {
      if (lines[i]!.trim() === "") flush()
      else paragraph.push(lines[i]!.replace(/\t/g, " "))
      i++
    }
  }
  flush()
  return sections
}

const parseDoc: Parser = (bytes, options, fail) =>
  Effect.map(attempt(fail, () => wordDocument(bytes)), ({ body, notes }) =>
    bySections([...wordSections(body), ...notes.flatMap((note) => prose(note, {}))], options))

// ---------------------------------------------------------------- PowerPoint (PPTX)

const officeText = (nodes: ReadonlyArray<OfficeContentNode> | undefined): string =>
  (nodes ?? []).map((node) => {
    if (node.type === "table") {
      return (node.children ?? []).map((row) => (row.children ?? []).map((cell) => oneLine(officeText(cell.children) || (cell.text ?? ""))).join(" | ")).join("\n")
    }
    if (node.text !== undefined && (node.type === "paragraph" || node.type === "heading" || node.type === "text")) return node.text
    return officeText(node.children)
  }).filter((text) => text.trim() !== "").join("\n")

const parsePptx: Parser = (bytes, options, fail) =>
  Effect.gen(function* () {
    const ast = yield* attempt(fail, () =>
      OfficeParser.parseOffice(asBuffer(bytes), {
        ignoreComments: true,
        ignoreSlideMasters: true,
        extractAttachments: false,
        ocr: false,
        outputErrorToConsole: false,
        onWarning: () => {}
      }))
    const slides = ast.content.filter((node) => node.type === "slide")
    const sections: Array<Section> = []
    for (const [index, node] of slides.entries()) {
      const slide = node.type === "slide" ? (node.metadata?.slideNumber ?? index + 1) : index + 1
      const notes = officeText(node.notes)
      sections.push(...prose(officeText(node.children) + (notes === "" ? "" : `\n\nNotes: ${notes}`), { slide }))
      options.onProgress?.(index + 1, slides.length)
    }
    return { sections, units: { kind: "slides", count: slides.length }, ocrPages: 0 }
  })

// ---------------------------------------------------------------- PowerPoint 97-2003 (PPT)

/**
 * officeparser reads no legacy .ppt, so its records are walked here ([MS-PPT]): the persist
 * directory of the latest edit maps slide ids to offsets, the document's slide list gives
 * the slide order and placeholder text, and each slide's drawing holds its other text boxes.
 * Speaker notes, masters and text inside embedded objects are not read.
 */
interface PptRecord { readonly type: number; readonly instance: number; readonly container: boolean; readonly body: number; readonly end: number }

const u32 = (data: Uint8Array, at: number) => at + 4 <= data.length ? (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0 : 0

const recordAt = (data: Uint8Array, at: number, limit: number): PptRecord | undefined => {
  if (at < 0 || at + 8 > limit) return undefined
  const verInstance = data[at]! | (data[at + 1]! << 8)
  const end = at + 8 + u32(data, at + 4)
  if (end > limit) return undefined
  return { type: data[at + 2]! | (data[at + 3]! << 8), instance: verInstance >> 4, container: (verInstance & 0xf) === 0xf, body: at + 8, end }
}

const recordsIn = (data: Uint8Array, from: number, to: number): Array<PptRecord> => {
  const records: Array<PptRecord> = []
  for (let record = recordAt(data, from, to); record !== undefined; record = recordAt(data, record.end, to)) records.push(record)
  return records
}

const TEXT_CHARS = 0x0fa0
const TEXT_BYTES = 0x0fa8

const atomText = (data: Uint8Array, record: PptRecord): string | undefined =>
  record.type === TEXT_CHARS
    ? new TextDecoder("utf-16le").decode(data.subarray(record.body, record.end))
    : record.type === TEXT_BYTES
    ? new TextDecoder("windows-1252").decode(data.subarray(record.body, record.end))
    : undefined

const textsIn = (data: Uint8Array, record: PptRecord, depth = 0): Array<string> => {
  const text = atomText(data, record)
  if (text !== undefined) return [text]
  return record.container && depth < 24 ? recordsIn(data, record.body, record.end).flatMap((child) => textsIn(data, child, depth + 1)) : []
}

const slideText = (texts: ReadonlyArray<string>) =>
  [...new Set(texts.map((text) => tidy(text.replace(/[\r\v]/g, "\n"))).filter((text) => text !== "" && text !== "*"))].join("\n")

const persistDirectory = (data: Uint8Array, currentUser: Uint8Array | undefined) => {
  const offsets = new Map<number, number>()
  let documentRef: number | undefined
  let edit = currentUser !== undefined && currentUser.length >= 20 ? u32(currentUser, 16) : 0
  if (recordAt(data, edit, data.length)?.type !== 0x0ff5) {
    edit = 0
    for (let at = 0, record = recordAt(data, 0, data.length); record !== undefined; at = record.end, record = recordAt(data, at, data.length)) {
      if (record.type === 0x0ff5) edit = at
    }
  }
  const seen = new Set<number>()
  while (edit !== 0 && !seen.has(edit)) {
    seen.add(edit)
    const userEdit = recordAt(data, edit, data.length)
    if (userEdit === undefined || userEdit.type !== 0x0ff5) break
    documentRef ??= u32(data, userEdit.body + 16)
    const directory = recordAt(data, u32(data, userEdit.body + 12), data.length)
    if (directory !== undefined && directory.type === 0x1772) {
      for (let at = directory.body; at + 4 <= directory.end;) {
        const entry = u32(data, at)
        at += 4
        for (let k = 0; k < entry >>> 20 && at + 4 <= directory.end; k++, at += 4) {
          const id = (entry & 0xfffff) + k
          if (!offsets.has(id)) offsets.set(id, u32(data, at))
        }
      }
    }
    edit = u32(data, userEdit.body + 8)
  }
  return { offsets, documentRef }
}

export const pptSlides = (file: CompoundFile): Array<string> => {
  const data = file.stream("PowerPoint Document")
  if (data === undefined) throw new Error("it has no PowerPoint Document stream")
  const { documentRef, offsets } = persistDirectory(data, file.stream("Current User"))
  const document = documentRef === undefined ? undefined : recordAt(data, offsets.get(documentRef) ?? -1, data.length)
  const slideList = document?.type === 0x03e8
    ? recordsIn(data, document.body, document.end).find((record) => record.type === 0x0ff0 && record.instance === 0)
    : undefined
  if (slideList === undefined) {
    // No usable persist directory: slides in the order they are stored.
    return recordsIn(data, 0, data.length).filter((record) => record.type === 0x03ee).map((slide) => slideText(textsIn(data, slide)))
  }
  const slides: Array<{ readonly persistRef: number; readonly texts: Array<string> }> = []
  for (const record of recordsIn(data, slideList.body, slideList.end)) {
    if (record.type === 0x03f3) slides.push({ persistRef: u32(data, record.body), texts: [] })
    else slides[slides.length - 1]?.texts.push(atomText(data, record) ?? "")
  }
  return slides.map(({ persistRef, texts }) => {
    const slide = recordAt(data, offsets.get(persistRef) ?? -1, data.length)
    return slideText([...texts, ...(slide?.type === 0x03ee ? textsIn(data, slide) : [])])
  })
}

const parsePpt: Parser = (bytes, options, fail) =>
  Effect.map(
    attempt(fail, () => {
      const file = readCompoundFile(bytes)
      if (file === undefined) throw new Error("its OLE2 container is damaged")
      const slides = pptSlides(file)
      if (slides.length === 0) throw new Error("no slides were found; the file may be damaged")
      return slides
    }),
    (slides) => {
      slides.forEach((_, i) => options.onProgress?.(i + 1, slides.length))
      return {
        sections: slides.flatMap((text, i) => prose(text, { slide: i + 1 })),
        units: { kind: "slides", count: slides.length },
        ocrPages: 0
      }
    }
  )

// ---------------------------------------------------------------- Audio (MP3, WAV)

const INSTALL_HINT = "apt-get install pocketsphinx pocketsphinx-en-us ffmpeg"

const executable = (path: string) => access(path, constants.X_OK).then(() => true, () => false)

const onPath = async (name: string) => {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "")) {
    if (await executable(join(dir, name))) return join(dir, name)
  }
  return undefined
}

const run = (command: string, args: ReadonlyArray<string>, what: string) =>
  Effect.async<string, ParseError>((resume, signal) => {
    execFile(command, [...args], { signal, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) resume(Effect.succeed(stdout))
      else resume(Effect.fail(new ParseError({ message: `${what} failed: ${describe(stderr.trim().split("\n").slice(-3).join(" ") || error)}` })))
    })
  })

/** Seconds of 16 kHz mono 16-bit audio in a WAV file, from its data chunk. */
const wavSeconds = (wav: Uint8Array) => {
  for (let at = 12; at + 8 <= wav.length; at += 8 + u32(wav, at + 4) + (u32(wav, at + 4) % 2)) {
    if (String.fromCharCode(...wav.subarray(at, at + 4)) === "data") return Math.min(u32(wav, at + 4), wav.length - at - 8) / 32000
  }
  return 0
}

const parseAudio: Parser = (bytes, options) =>
  Effect.gen(function* () {
    const tools = options.transcriber ??
      { pocketsphinx: (yield* Effect.promise(() => onPath("pocketsphinx_continuous"))) ?? "", ffmpeg: (yield* Effect.promise(() => onPath("ffmpeg"))) ?? "" }
    for (const [name, path] of [["pocketsphinx", tools.pocketsphinx], ["ffmpeg", tools.ffmpeg]] as const) {
      if (!(yield* Effect.promise(() => path === "" ? Promise.resolve(false) : executable(path)))) {
        return yield* new ParseError({
          message: `audio cannot be transcribed on this server: ${name} is not installed${path === "" ? "" : ` (no executable at ${path})`}; install it with \`${INSTALL_HINT}\``
        })
      }
    }
    const dir = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => mkdtemp(join(tmpdir(), "engram-audio-")), catch: (cause) => new ParseError({ message: `no room for audio conversion: ${describe(cause)}` }) }),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    const input = join(dir, "input")
    const wav = join(dir, "speech.wav")
    yield* Effect.tryPromise({ try: () => writeFile(input, bytes), catch: (cause) => new ParseError({ message: `no room for audio conversion: ${describe(cause)}` }) })
    yield* run(tools.ffmpeg, ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", input, "-ar", "16000", "-ac", "1", "-sample_fmt", "s16", "-f", "wav", wav], "this audio file could not be decoded: ffmpeg")
    const seconds = wavSeconds(yield* Effect.tryPromise({ try: () => readFile(wav), catch: (cause) => new ParseError({ message: `this audio file could not be decoded: ${describe(cause)}` }) }))
    const transcript = yield* run(tools.pocketsphinx, ["-infile", wav, "-logfn", "/dev/null"], `transcription (is pocketsphinx-en-us installed? ${INSTALL_HINT})`)
    options.onProgress?.(1, 1)
    return {
      sections: prose(transcript.split("\n").map((line) => line.trim()).filter((line) => line !== "").join("\n"), {}),
      units: { kind: "seconds", count: Math.round(seconds * 10) / 10 },
      ocrPages: 0
    }
  })

// ---------------------------------------------------------------- entry point

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
