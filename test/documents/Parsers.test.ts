import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as XLSX from "xlsx"
import { chunkDocument, chunkSections, pageChunks } from "../../src/documents/Chunks.ts"
import { detectFormat, readCompoundFile } from "../../src/documents/Formats.ts"
import { type ParseOptions, parseDocument, pptSlides, type Section } from "../../src/documents/Parsers.ts"

const cachePath = mkdtempSync(join(tmpdir(), "engram-ocr-"))
afterAll(() => rmSync(cachePath, { recursive: true, force: true }))

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/documents/${name}`, import.meta.url)))
const text = (content: string) => new TextEncoder().encode(content)

const parse = (bytes: Uint8Array, filename: string, options: Partial<ParseOptions> = {}, contentType?: string) =>
  parseDocument(bytes, filename, contentType, { cachePath, ...options })

const parseError = (bytes: Uint8Array, filename: string, options: Partial<ParseOptions> = {}) =>
  Effect.map(Effect.flip(parse(bytes, filename, options)), (error) => {
    expect(error._tag).toBe("ParseError")
    return error.message
  })

const workbook = (bookType: "xlsx" | "biff8") => {
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([
    ["Name", "City", "Since"],
    ["Alice", "Paris", 2019],
    ["Bruno", "Lisbon", 2021],
    [],
    ["Chen", "", 2023]
  ]), "Offices")
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([[], ["Project", "Owner"], ["Atlas", "Dara"]]), "Projects")
  const out: unknown = XLSX.write(book, { type: "buffer", bookType })
  if (!(out instanceof Uint8Array)) throw new Error("SheetJS wrote no bytes")
  return new Uint8Array(out)
}

const withProgress = () => {
  const calls: Array<[number, number]> = []
  return { calls, onProgress: (done: number, total: number) => void calls.push([done, total]) }
}

const onPath = (name: string) => (process.env["PATH"] ?? "").split(":").some((dir) => dir !== "" && existsSync(join(dir, name)))
const canTranscribe = onPath("pocketsphinx_continuous") && onPath("ffmpeg")

describe("format detection", () => {
  it("reads the content before the name", () => {
    expect(detectFormat(fixture("sample.docx"), "notes.txt", "text/plain")).toBe("docx")
    expect(detectFormat(fixture("photo.png"), "x.pdf", "application/pdf")).toBe("png")
    expect(detectFormat(fixture("photo.jpg"), "photo.png", undefined)).toBe("jpg")
    expect(detectFormat(fixture("sample.pptx"), "deck.zip", undefined)).toBe("pptx")
    expect(detectFormat(workbook("xlsx"), "upload", undefined)).toBe("xlsx")
    expect(detectFormat(fixture("text.pdf"), "report.docx", undefined)).toBe("pdf")
    expect(detectFormat(fixture("speech.wav"), "a.mp3", undefined)).toBe("wav")
    expect(detectFormat(fixture("speech.mp3"), "a.wav", undefined)).toBe("mp3")
  })

  it("tells legacy Office files apart by their OLE2 streams, whatever their name", () => {
    expect(detectFormat(fixture("sample.doc"), "slides.ppt", undefined)).toBe("doc")
    expect(detectFormat(fixture("sample.ppt"), "letter.doc", undefined)).toBe("ppt")
    expect(detectFormat(workbook("biff8"), "data.csv", "text/csv")).toBe("xls")
    // An OLE2 header whose directory cannot be read: the name decides between the legacy formats.
    const header = fixture("sample.doc").slice(0, 512)
    expect(detectFormat(header, "old.ppt", undefined)).toBe("ppt")
    expect(detectFormat(header, "old.bin", undefined)).toBeUndefined()
  })

  it("tells text formats apart by name and content type, and sniffs HTML from content", () => {
    expect(detectFormat(text("a,b\n1,2\n"), "data.csv", undefined)).toBe("csv")
    expect(detectFormat(text("a,b\n1,2\n"), "upload", "text/csv; charset=utf-8")).toBe("csv")
    expect(detectFormat(text("# Title\n\nbody"), "README.md", undefined)).toBe("markdown")
    expect(detectFormat(text("<!DOCTYPE html><html><body>x</body></html>"), "page.txt", "text/plain")).toBe("html")
    expect(detectFormat(text("just words"), "notes", undefined)).toBe("txt")
    expect(detectFormat(text("A PDF file starts with %PDF-1.7, then objects."), "pdf-notes.txt", undefined)).toBe("txt")
    expect(detectFormat(text("a\tb\n1\t2\n"), "table.tsv", undefined)).toBe("csv")
  })

  it("gives nothing for a binary it does not know", () => {
    const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256)
    expect(detectFormat(random, "data.txt", "text/plain")).toBeUndefined()
    expect(detectFormat(new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]), "empty.docx", undefined)).toBeUndefined()
  })
})

describe("parsing, format by format", () => {
  it.effect("PDF: text per page, with progress per page", () =>
    Effect.gen(function*() {
      const progress = withProgress()
      const doc = yield* parse(fixture("text.pdf"), "text.pdf", { onProgress: progress.onProgress })
      expect(doc.format).toBe("pdf")
      expect(doc.units).toEqual({ kind: "pages", count: 2 })
      expect(doc.ocrPages).toBe(0)
      expect(doc.sections.map((s) => s.location)).toEqual([{ page: 1 }, { page: 2 }])
      expect(doc.sections[0]!.text).toContain("The Lisbon office opens in March.")
      expect(doc.sections[0]!.text).toContain("Beatriz Almeida")
      expect(doc.sections[1]!.text).toContain("The lighthouse keeper in Cascais")
      expect(doc.sections[1]!.text).not.toContain("Lisbon")
      expect(progress.calls).toEqual([[1, 2], [2, 2]])
      expect(doc.textLength).toBe(doc.sections.reduce((n, s) => n + s.text.length, 0))
    }))

  it.effect("PDF: bytes handed over as a Buffer are read, and left as they were", () =>
    Effect.gen(function*() {
      const buffer = readFileSync(new URL("../fixtures/documents/text.pdf", import.meta.url))
      const before = Buffer.from(buffer)
      const doc = yield* parse(buffer, "text.pdf")
      expect(doc.sections.map((s) => s.location.page)).toEqual([1, 2])
      expect(buffer.equals(before)).toBe(true)
    }))

  it.effect("PDF: a page with no text layer is OCR'd", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("scanned.pdf"), "scanned.pdf")
      expect(doc.ocrPages).toBe(1)
      expect(doc.sections).toHaveLength(1)
      expect(doc.sections[0]!.location).toEqual({ page: 1, ocr: true })
      expect(doc.sections[0]!.text).toMatch(/Porto warehouse receives forty crates of olive oil/)
    }), 60_000)

  it.effect("PDF: a black and white (1 bit, CCITT) scan is OCR'd", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("scanned-bw.pdf"), "scanned-bw.pdf")
      expect(doc.ocrPages).toBe(1)
      expect(doc.sections).toEqual([{ text: expect.stringMatching(/Porto warehouse receives forty crates of olive oil/), location: { page: 1, ocr: true }, table: false }])
    }), 60_000)

  it.effect("PDF: a scanned page whose text layer is only a page number is OCR'd too", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("scanned-numbered.pdf"), "scanned-numbered.pdf")
      expect(doc.ocrPages).toBe(1)
      expect(doc.sections[0]!.location).toEqual({ page: 1, ocr: true })
      expect(doc.sections[0]!.text).toMatch(/northern loading dock/)
    }), 60_000)

  it.effect("PNG and JPG are OCR'd, a PNG named .pdf included", () =>
    Effect.gen(function*() {
      for (const [name, bytes] of [["photo.png", fixture("photo.png")], ["photo.jpg", fixture("photo.jpg")], ["x.pdf", fixture("photo.png")]] as const) {
        const progress = withProgress()
        const doc = yield* parse(bytes, name, { onProgress: progress.onProgress })
        expect(doc.format).toBe(name === "photo.jpg" ? "jpg" : "png")
        expect(doc.ocrPages).toBe(1)
        expect(doc.sections).toEqual([{ text: expect.stringMatching(/Meet Clara at the harbour\s+Friday at noon/), location: { ocr: true }, table: false }])
        expect(progress.calls).toEqual([[1, 1]])
      }
    }), 60_000)

  it.effect("DOCX: prose under its heading path, a table one row at a time with its header", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("sample.docx"), "sample.docx")
      expect(doc.format).toBe("docx")
      expect(doc.sections).toEqual([
        { text: "The Lisbon office opens in March. Twelve engineers will move there from Porto.", location: { heading_path: ["Quarterly plan"] }, table: false },
        { text: "We hire four designers before the summer. Interviews happen on Thursdays.", location: { heading_path: ["Quarterly plan", "Hiring"] }, table: false },
        { text: "Team: Platform | Lead: Ingrid", location: { heading_path: ["Quarterly plan", "Hiring"], row: 2 }, table: true },
        { text: "Team: Search | Lead: Tomasz", location: { heading_path: ["Quarterly plan", "Hiring"], row: 3 }, table: true },
        { text: "The travel budget stays at forty thousand euros.", location: { heading_path: ["Quarterly plan", "Budget"] }, table: false }
      ])
    }))

  it.effect("DOCX named notes.txt is still read as a DOCX", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("sample.docx"), "notes.txt", {}, "text/plain")
      expect(doc.format).toBe("docx")
      expect(doc.sections[0]!.location.heading_path).toEqual(["Quarterly plan"])
    }))

  it.effect("DOC: body text, and its table rows with their header", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("sample.doc"), "sample.doc")
      expect(doc.format).toBe("doc")
      const all = doc.sections.map((s) => s.text).join("\n")
      expect(all).toContain("The Lisbon office opens in March.")
      expect(all).toContain("The travel budget stays at forty thousand euros.")
      expect(doc.sections.filter((s) => s.table)).toEqual([
        { text: "Team: Platform | Lead: Ingrid", location: { row: 2 }, table: true },
        { text: "Team: Search | Lead: Tomasz", location: { row: 3 }, table: true }
      ])
    }))

  for (const name of ["sample.pptx", "sample.ppt"]) {
    it.effect(`${name.toUpperCase().slice(7)}: one section per slide, numbered`, () =>
      Effect.gen(function*() {
        const progress = withProgress()
        const doc = yield* parse(fixture(name), name, { onProgress: progress.onProgress })
        expect(doc.units).toEqual({ kind: "slides", count: 3 })
        expect(doc.sections).toEqual([
          { text: "Roadmap for Lisbon\nThe Lisbon office opens in March.\nTwelve engineers relocate from Porto.", location: { slide: 1 }, table: false },
          { text: "Budget review\nMarketing spend drops by eight percent.", location: { slide: 2 }, table: false },
          { text: "Questions from Wojciech", location: { slide: 3 }, table: false }
        ])
        expect(progress.calls).toEqual([[1, 3], [2, 3], [3, 3]])
      }))
  }

  it("PPT: without its Current User stream the last edit is found by walking the records", () => {
    const file = readCompoundFile(fixture("sample.ppt"))
    expect(file?.names).toContain("PowerPoint Document")
    if (file === undefined) return
    const withoutCurrentUser = { names: file.names, stream: (name: string) => (name === "Current User" ? undefined : file.stream(name)) }
    expect(pptSlides(withoutCurrentUser)).toEqual(pptSlides(file))
    expect(pptSlides(file).map((slide) => slide.split("\n")[0])).toEqual(["Roadmap for Lisbon", "Budget review", "Questions from Wojciech"])
  })

  for (const bookType of ["xlsx", "biff8"] as const) {
    it.effect(`${bookType === "xlsx" ? "XLSX" : "XLS"}: a row per section, header kept, sheet and row numbers`, () =>
      Effect.gen(function*() {
        const progress = withProgress()
        const doc = yield* parse(workbook(bookType), bookType === "xlsx" ? "offices.xlsx" : "offices.xls", { onProgress: progress.onProgress })
        expect(doc.format).toBe(bookType === "xlsx" ? "xlsx" : "xls")
        expect(doc.units).toEqual({ kind: "rows", count: 4 })
        expect(doc.sections).toEqual([
          { text: "Name: Alice | City: Paris | Since: 2019", location: { sheet: "Offices", row: 2 }, table: true },
          { text: "Name: Bruno | City: Lisbon | Since: 2021", location: { sheet: "Offices", row: 3 }, table: true },
          { text: "Name: Chen | Since: 2023", location: { sheet: "Offices", row: 5 }, table: true },
          { text: "Project: Atlas | Owner: Dara", location: { sheet: "Projects", row: 3 }, table: true }
        ])
        expect(progress.calls).toEqual([[1, 2], [2, 2]])
      }))
  }

  it.effect("CSV: values kept as written, quoted commas and newlines included", () =>
    Effect.gen(function*() {
      const csv = "ID,Name,Note\n0012,\"Silva, Ana\",\"first line\nsecond line\"\n0013,Rui,\n"
      const doc = yield* parse(text(csv), "people.csv")
      expect(doc.format).toBe("csv")
      expect(doc.sections.map((s) => [s.text, s.location.row, s.table])).toEqual([
        ["ID: 0012 | Name: Silva, Ana | Note: first line second line", 2, true],
        ["ID: 0013 | Name: Rui", 3, true]
      ])
    }))

  it.effect("HTML: heading path, table rows with their header, no scripts", () =>
    Effect.gen(function*() {
      const html = `<!DOCTYPE html><html><head><title>t</title><script>var secret = 1</script></head><body>
        <h1>Field guide</h1><p>Birds of the <a href="https://example.org">Tagus estuary</a>.</p>
        <h2>Waders</h2><p>Flamingos feed at low tide.</p>
        <table><thead><tr><th>Bird</th><th>Season</th></tr></thead>
        <tbody><tr><td>Avocet</td><td>Winter</td></tr><tr><td>Spoonbill</td><td>All year</td></tr></tbody></table>
        <h2>Raptors</h2><ul><li>Osprey</li><li>Black kite</li></ul></body></html>`
      const doc = yield* parse(text(html), "guide.html")
      expect(doc.format).toBe("html")
      expect(doc.sections).toEqual([
        { text: "Birds of the Tagus estuary.", location: { heading_path: ["Field guide"] }, table: false },
        { text: "Flamingos feed at low tide.", location: { heading_path: ["Field guide", "Waders"] }, table: false },
        { text: "Bird: Avocet | Season: Winter", location: { heading_path: ["Field guide", "Waders"], row: 2 }, table: true },
        { text: "Bird: Spoonbill | Season: All year", location: { heading_path: ["Field guide", "Waders"], row: 3 }, table: true },
        { text: expect.stringMatching(/Osprey\s*\n.*Black kite/), location: { heading_path: ["Field guide", "Raptors"] }, table: false }
      ])
      expect(doc.sections.map((s) => s.text).join(" ")).not.toContain("secret")
    }))

  it.effect("Markdown: heading path from the lexer, inline markup dropped, tables by row", () =>
    Effect.gen(function*() {
      const md = [
        "# Quarterly plan", "", "The **Lisbon** office opens in [March](https://example.org).", "",
        "## Hiring", "", "| Role | Count |", "|---|---|", "| Designer | 4 |", "| Engineer | 12 |", "",
        "### Interviews", "", "- On Thursdays", "- In Porto & Lisbon", "",
        "# Appendix", "", "`code` stays."
      ].join("\n")
      const doc = yield* parse(text(md), "plan.md")
      expect(doc.format).toBe("markdown")
      expect(doc.sections).toEqual([
        { text: "The Lisbon office opens in March.", location: { heading_path: ["Quarterly plan"] }, table: false },
        { text: "Role: Designer | Count: 4", location: { heading_path: ["Quarterly plan", "Hiring"], row: 2 }, table: true },
        { text: "Role: Engineer | Count: 12", location: { heading_path: ["Quarterly plan", "Hiring"], row: 3 }, table: true },
        { text: "- On Thursdays\n- In Porto & Lisbon", location: { heading_path: ["Quarterly plan", "Hiring", "Interviews"] }, table: false },
        { text: "code stays.", location: { heading_path: ["Appendix"] }, table: false }
      ])
    }))

  it.effect("TXT: paragraphs, in UTF-8 or Windows-1252", () =>
    Effect.gen(function*() {
      const doc = yield* parse(text("First paragraph\nwraps here.\n\n\nSecond one: café."), "notes.txt")
      expect(doc.format).toBe("txt")
      expect(doc.sections.map((s) => s.text)).toEqual(["First paragraph\nwraps here.", "Second one: café."])
      const latin = yield* parse(new Uint8Array([...text("Caf"), 0xe9, ...text(" au lait")]), "menu.txt")
      expect(latin.sections[0]!.text).toBe("Café au lait")
    }))
})

describe("files that cannot be read", () => {
  it.effect("a corrupt PDF, a truncated DOCX, random bytes and an empty file fail with a clear message", () =>
    Effect.gen(function*() {
      expect(yield* parseError(fixture("text.pdf").slice(0, 3000), "broken.pdf")).toMatch(/^this file is not a readable PDF: /)
      expect(yield* parseError(text("%PDF-1.4\nnot really a pdf\n"), "fake.pdf")).toMatch(/^this file is not a readable PDF: /)
      expect(yield* parseError(fixture("sample.docx").slice(0, 3000), "broken.docx")).toMatch(/^this file is not a readable Word document \(DOCX\): /)
      expect(yield* parseError(fixture("sample.ppt").slice(0, 6000), "broken.ppt")).toMatch(/^this file is not a readable PowerPoint presentation \(PPT\): /)
      const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256)
      expect(yield* parseError(random, "mystery.bin")).toMatch(/^unsupported format: mystery\.bin is not a PDF/)
      expect(yield* parseError(new Uint8Array(0), "nothing.txt")).toBe("this file is empty")
      expect(yield* parseError(fixture("photo.png").slice(0, 200), "cut.png")).toMatch(/^this file is not a readable PNG image: /)
      expect(yield* parseError(text("\n\n   \n"), "blank.txt")).toBe("no text found in this text file")
    }), 60_000)
})

describe("audio", () => {
  const words = ["seven", "people", "will", "arrive", "tomorrow"]
  it.effect.skipIf(!canTranscribe)("WAV and MP3 are transcribed by pocketsphinx", () =>
    Effect.gen(function*() {
      for (const name of ["speech.wav", "speech.mp3"]) {
        const doc = yield* parse(fixture(name), name)
        expect(doc.format).toBe(name.slice(-3))
        expect(doc.units.kind).toBe("seconds")
        expect(doc.units.count).toBeGreaterThan(2)
        expect(doc.units.count).toBeLessThan(6)
        const heard = doc.sections[0]!.text.toLowerCase().split(/\W+/)
        expect(words.filter((word) => heard.includes(word)).length, doc.sections[0]!.text).toBeGreaterThanOrEqual(3)
      }
    }), 60_000)

  it.effect("without pocketsphinx the parse fails, naming what to install", () =>
    Effect.gen(function*() {
      const message = yield* parseError(fixture("speech.wav"), "speech.wav", {
        transcriber: { pocketsphinx: "/nonexistent/pocketsphinx_continuous", ffmpeg: "/nonexistent/ffmpeg" }
      })
      expect(message).toContain("pocketsphinx is not installed")
      expect(message).toContain("/nonexistent/pocketsphinx_continuous")
      expect(message).toContain("apt-get install pocketsphinx pocketsphinx-en-us ffmpeg")
    }))

  it.effect("the default transcriber is looked up on PATH", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const path = process.env["PATH"]
        process.env["PATH"] = "/nonexistent"
        return path
      }),
      () => Effect.map(parseError(fixture("speech.mp3"), "speech.mp3"), (message) => expect(message).toMatch(/pocketsphinx is not installed; install it with `apt-get install pocketsphinx/)),
      (path) => Effect.sync(() => void (process.env["PATH"] = path))
    ))
})

const section = (text: string, location: Section["location"], table = false): Section => ({ text, location, table })

describe("chunking", () => {
  const sentence = (i: number) => `Sentence number ${i} talks about the harbour of Lisbon and its ferries.`
  const prose = Array.from({ length: 60 }, (_, i) => sentence(i)).join(" ")

  it("cuts prose at sentence boundaries, within the limit, never inside a word", () => {
    const chunks = chunkSections([section(prose, { page: 1 })], 300)
    expect(chunks.length).toBeGreaterThan(10)
    for (const chunk of chunks) {
      expect(chunk.text.length).toBeLessThanOrEqual(300)
      expect(chunk.text).toMatch(/^Sentence number \d+ .*ferries\.$/)
      expect(chunk.location).toEqual({ page: 1 })
    }
    expect(chunks.map((c) => c.text).join(" ")).toBe(prose)
  })

  it("cuts a sentence longer than the limit between words, and only a word longer than the limit inside", () => {
    const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ")
    const chunks = chunkSections([section(long, {})], 100)
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(100)
    expect(chunks.map((c) => c.text).join(" ")).toBe(long)
    expect(chunkSections([section("x".repeat(250), {})], 100).map((c) => c.text.length)).toEqual([100, 100, 50])
  })

  it("merges small paragraphs of one page, never text of two pages, slides, sheets or headings", () => {
    const chunks = chunkSections([
      section("One.", { page: 1 }), section("Two.", { page: 1 }), section("Three.", { page: 2 }),
      section("Four.", { slide: 1 }), section("Five.", { slide: 2 }),
      section("Six.", { heading_path: ["A"] }), section("Seven.", { heading_path: ["A", "B"] }), section("Eight.", { heading_path: ["A", "B"] })
    ])
    expect(chunks).toEqual([
      { text: "One.\n\nTwo.", location: { page: 1 } },
      { text: "Three.", location: { page: 2 } },
      { text: "Four.", location: { slide: 1 } },
      { text: "Five.", location: { slide: 2 } },
      { text: "Six.", location: { heading_path: ["A"] } },
      { text: "Seven.\n\nEight.", location: { heading_path: ["A", "B"] } }
    ])
  })

  it("packs the rows of one sheet, one a line with its header, with the first and last row", () => {
    const rows = Array.from({ length: 30 }, (_, i) => section(`Name: Person ${i} | City: Paris`, { sheet: "People", row: i + 2 }, true))
    const other = section("Project: Atlas | Owner: Dara", { sheet: "Projects", row: 2 }, true)
    const chunks = chunkSections([...rows, other], 200)
    const people = chunks.filter((c) => c.location.sheet === "People")
    expect(people.length).toBeGreaterThan(3)
    let next = 2
    for (const chunk of people) {
      expect(chunk.text.length).toBeLessThanOrEqual(200)
      const lines = chunk.text.split("\n")
      for (const line of lines) expect(line).toMatch(/^Name: Person \d+ \| City: Paris$/)
      expect(chunk.location.row).toBe(next)
      expect(chunk.location.row_end).toBe(next + lines.length - 1)
      next += lines.length
    }
    expect(next).toBe(32)
    expect(chunks[chunks.length - 1]).toEqual({ text: "Project: Atlas | Owner: Dara", location: { sheet: "Projects", row: 2, row_end: 2 } })
  })

  it("starts a new chunk for a new table under the same heading, and keeps prose apart from rows", () => {
    const chunks = chunkSections([
      section("A: 1", { heading_path: ["H"], row: 2 }, true), section("A: 2", { heading_path: ["H"], row: 3 }, true),
      section("Between the tables.", { heading_path: ["H"] }),
      section("B: 1", { heading_path: ["H"], row: 2 }, true),
      section("C: 1", { heading_path: ["H"], row: 2 }, true)
    ])
    expect(chunks.map((c) => [c.text, c.location.row, c.location.row_end])).toEqual([
      ["A: 1\nA: 2", 2, 3], ["Between the tables.", undefined, undefined], ["B: 1", 2, 2], ["C: 1", 2, 2]
    ])
  })

  it("the pages strategy makes one chunk per page, split only beyond four times the limit", () => {
    const long = Array.from({ length: 100 }, (_, i) => sentence(i)).join(" ")
    const chunks = pageChunks([
      section("Intro.", { page: 1 }), section(long, { page: 1, ocr: true }), section("Back matter.", { page: 2 })
    ], 1200)
    expect(chunks.map((c) => c.location)).toEqual([{ page: 1, ocr: true }, { page: 1, ocr: true }, { page: 2 }])
    expect(chunks[0]!.text.startsWith("Intro.\n\nSentence number 0")).toBe(true)
    expect(chunks[0]!.text.length).toBeLessThanOrEqual(4800)
    expect(chunks[0]!.text.length).toBeGreaterThan(1200)
    expect(chunks.map((c) => c.text).join(" ").replace("Intro.\n\n", "Intro. ")).toBe(`Intro. ${long} Back matter.`)
  })

  it.effect("chunks a parsed document with either strategy", () =>
    Effect.gen(function*() {
      const doc = yield* parse(fixture("sample.docx"), "sample.docx")
      expect(chunkDocument(doc, "chunks")).toContainEqual({
        text: "Team: Platform | Lead: Ingrid\nTeam: Search | Lead: Tomasz",
        location: { heading_path: ["Quarterly plan", "Hiring"], row: 2, row_end: 3 }
      })
      expect(chunkDocument(doc, "pages").map((c) => c.location.heading_path)).toEqual([["Quarterly plan"], ["Quarterly plan", "Hiring"], ["Quarterly plan", "Budget"]])
    }))
})
