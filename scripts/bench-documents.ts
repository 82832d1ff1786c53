/**
 * `npm run bench:documents`: parse speed of every upload format on this
 * machine. Large inputs are generated (a 20-page PDF, 5,000-row XLSX and CSV,
 * long HTML/Markdown/TXT, a 5-page scanned PDF); the Office, image and audio
 * fixtures are parsed as they are. Prints units per second and, for OCR, the
 * seconds per page.
 */
import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { deflateSync } from "node:zlib"
import { extractImages, getDocumentProxy } from "unpdf"
import * as XLSX from "xlsx"
import { type ParsedDocument, parseDocument } from "../src/documents/Parsers.ts"

const cachePath = mkdtempSync(join(tmpdir(), "engram-bench-ocr-"))
const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../test/fixtures/documents/${name}`, import.meta.url)))
const utf8 = (text: string) => new TextEncoder().encode(text)

const WORDS = ["harbour", "ferry", "Lisbon", "office", "budget", "March", "engineers", "schedule", "lighthouse", "regatta", "visitors", "winter",
  "accountant", "approved", "spring", "railings", "Porto", "warehouse", "crates", "dock"]
let seed = 7
const word = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return WORDS[seed % WORDS.length]!
}
const sentence = () => {
  const words = Array.from({ length: 12 }, word)
  return `${words[0]![0]!.toUpperCase()}${words.join(" ").slice(1)}.`
}

/** A minimal PDF: pages of Helvetica text lines, or pages that are one RGB image each. */
const makePdf = (pages: ReadonlyArray<{ readonly lines?: ReadonlyArray<string> }>, image?: { readonly width: number; readonly height: number; readonly rgb: Uint8Array }) => {
  const objects: Array<Uint8Array> = []
  const add = (body: string | Uint8Array) => objects.push(typeof body === "string" ? utf8(body) : body)
  const stream = (dict: string, data: Uint8Array) => {
    const head = utf8(`<< ${dict} /Length ${data.length} >>\nstream\n`)
    const tail = utf8("\nendstream")
    const out = new Uint8Array(head.length + data.length + tail.length)
    out.set(head)
    out.set(data, head.length)
    out.set(tail, head.length + data.length)
    return out
  }
  const firstPage = image === undefined ? 4 : 5
  add("<< /Type /Catalog /Pages 2 0 R >>")
  add(`<< /Type /Pages /Count ${pages.length} /Kids [${pages.map((_, i) => `${firstPage + i * 2} 0 R`).join(" ")}] >>`)
  add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
  if (image !== undefined) {
    add(stream(`/Type /XObject /Subtype /Image /Width ${image.width} /Height ${image.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode`, deflateSync(image.rgb)))
  }
  for (const [i, page] of pages.entries()) {
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >>${image === undefined ? "" : " /XObject << /Im1 4 0 R >>"} >> /Contents ${firstPage + i * 2 + 1} 0 R >>`)
    const content = page.lines !== undefined
      ? `BT /F1 10 Tf 14 TL 50 800 Td ${page.lines.map((line) => `(${line.replace(/[()\\]/g, (c) => `\\${c}`)}) Tj T*`).join(" ")} ET`
      : `q 595 0 0 ${Math.round((595 * (image?.height ?? 1)) / (image?.width ?? 1))} 0 400 cm /Im1 Do Q`
    add(stream("", utf8(content)))
  }
  const parts: Array<Uint8Array> = [utf8("%PDF-1.4\n")]
  let offset = parts[0]!.length
  const offsets: Array<number> = []
  for (const [i, body] of objects.entries()) {
    offsets.push(offset)
    const wrapped = [utf8(`${i + 1} 0 obj\n`), body, utf8("\nendobj\n")]
    parts.push(...wrapped)
    offset += wrapped.reduce((n, p) => n + p.length, 0)
  }
  parts.push(utf8(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`))
  parts.push(utf8(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`))
  return Buffer.concat(parts)
}

/** The page image of the scanned fixture, as RGB, to build a longer scan from. */
const scannedImage = async () => {
  const pdf = await getDocumentProxy(fixture("scanned.pdf"))
  const [image] = await extractImages(pdf, 1)
  await pdf.destroy()
  if (image === undefined) throw new Error("scanned.pdf has no image")
  const rgb = new Uint8Array(image.width * image.height * 3)
  for (let p = 0; p < image.width * image.height; p++) {
    for (let c = 0; c < 3; c++) rgb[p * 3 + c] = image.data[p * image.channels + (image.channels >= 3 ? c : 0)]!
  }
  return { width: image.width, height: image.height, rgb }
}

const rows = Array.from({ length: 5000 }, (_, i) => [`Person ${i}`, word(), word(), 1000 + i, sentence()])
const header = ["Name", "City", "Team", "Badge", "Note"]
const book = XLSX.utils.book_new()
XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([header, ...rows]), "People")
const xlsxBytes: unknown = XLSX.write(book, { type: "buffer", bookType: "xlsx" })
if (!(xlsxBytes instanceof Uint8Array)) throw new Error("SheetJS wrote no bytes")

const paragraphs = Array.from({ length: 400 }, () => Array.from({ length: 5 }, sentence).join(" "))
const html = `<!DOCTYPE html><html><body>${paragraphs.map((p, i) => `${i % 20 === 0 ? `<h${1 + ((i / 20) % 2)}>Part ${i / 20}</h${1 + ((i / 20) % 2)}>` : ""}<p>${p}</p>`).join("\n")}
<table><tr><th>Name</th><th>City</th></tr>${rows.slice(0, 500).map((r) => `<tr><td>${r[0]}</td><td>${r[1]}</td></tr>`).join("")}</table></body></html>`
const markdown = paragraphs.map((p, i) => `${i % 20 === 0 ? `${"#".repeat(1 + ((i / 20) % 3))} Part ${i / 20}\n\n` : ""}${p}\n`).join("\n")

interface Case { readonly format: string; readonly file: string; readonly bytes: Uint8Array; readonly runs: number }

const cases = async (): Promise<Array<Case>> => [
  { format: "pdf (20 pages)", file: "long.pdf", bytes: makePdf(Array.from({ length: 20 }, () => ({ lines: Array.from({ length: 50 }, () => sentence().slice(0, 95)) }))), runs: 5 },
  { format: "pdf (5 scanned pages)", file: "scan.pdf", bytes: makePdf(Array.from({ length: 5 }, () => ({})), await scannedImage()), runs: 2 },
  { format: "docx", file: "sample.docx", bytes: fixture("sample.docx"), runs: 20 },
  { format: "doc", file: "sample.doc", bytes: fixture("sample.doc"), runs: 20 },
  { format: "pptx", file: "sample.pptx", bytes: fixture("sample.pptx"), runs: 20 },
  { format: "ppt", file: "sample.ppt", bytes: fixture("sample.ppt"), runs: 20 },
  { format: "xlsx (5,000 rows)", file: "people.xlsx", bytes: new Uint8Array(xlsxBytes), runs: 3 },
  { format: "csv (5,000 rows)", file: "people.csv", bytes: utf8(XLSX.utils.sheet_to_csv(XLSX.utils.aoa_to_sheet([header, ...rows]))), runs: 3 },
  { format: "html (400 paragraphs, 500 rows)", file: "long.html", bytes: utf8(html), runs: 3 },
  { format: "markdown (400 paragraphs)", file: "long.md", bytes: utf8(markdown), runs: 3 },
  { format: "txt (400 paragraphs)", file: "long.txt", bytes: utf8(paragraphs.join("\n\n")), runs: 3 },
  { format: "png (OCR)", file: "photo.png", bytes: fixture("photo.png"), runs: 3 },
  { format: "jpg (OCR)", file: "photo.jpg", bytes: fixture("photo.jpg"), runs: 3 },
  { format: "pdf (1 scanned page)", file: "scanned.pdf", bytes: fixture("scanned.pdf"), runs: 3 },
  { format: "wav", file: "speech.wav", bytes: fixture("speech.wav"), runs: 2 },
  { format: "mp3", file: "speech.mp3", bytes: fixture("speech.mp3"), runs: 2 }
]

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const table: Array<Array<string>> = [["format", "size", "units", "units/s", "ms/parse", "OCR s/page"]]
try {
  for (const c of await cases()) {
    const times: Array<number> = []
    let parsed: ParsedDocument | undefined
    let failure: string | undefined
    for (let run = 0; run < c.runs && failure === undefined; run++) {
      const started = performance.now()
      const result = await Effect.runPromise(Effect.either(parseDocument(c.bytes, c.file, undefined, { cachePath })))
      times.push((performance.now() - started) / 1000)
      if (result._tag === "Left") failure = result.left.message
      else parsed = result.right
    }
    if (failure !== undefined || parsed === undefined) {
      table.push([c.format, `${Math.round(c.bytes.length / 1024)} KB`, "-", "-", "-", failure ?? "no result"])
      continue
    }
    const seconds = median(times)
    table.push([
      c.format,
      `${Math.round(c.bytes.length / 1024)} KB`,
      `${parsed.units.count} ${parsed.units.kind}`,
      (parsed.units.count / seconds).toFixed(1),
      (seconds * 1000).toFixed(0),
      parsed.ocrPages > 0 ? (seconds / parsed.ocrPages).toFixed(2) : ""
    ])
    console.error(`${c.format}: done`)
  }
} finally {
  rmSync(cachePath, { recursive: true, force: true })
}
const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)))
for (const row of table) console.log(row.map((cell, i) => (i === 0 || i === 5 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "))
