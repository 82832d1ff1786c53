/** Word documents: DOCX through mammoth's HTML, legacy DOC through word-extractor. */
import { Effect } from "effect"
import mammoth from "mammoth"
import { htmlSections } from "./Markup.ts"
import { asBuffer, attempt, bySections, isRecord, type Parser, prose, requireCjs, rowSections, type Section } from "./Shared.ts"

export const parseDocx: Parser = (bytes, options, fail) =>
  Effect.gen(function* () {
    const result = yield* attempt(fail, () =>
      mammoth.convertToHtml(
        { buffer: asBuffer(bytes) },
        // Images carry no text here; skip encoding them into the HTML.
        { convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: "" })) }
      ))
    return bySections(yield* attempt(fail, () => htmlSections(result.value)), options)
  })

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

export const parseDoc: Parser = (bytes, options, fail) =>
  Effect.map(attempt(fail, () => wordDocument(bytes)), ({ body, notes }) =>
    bySections([...wordSections(body), ...notes.flatMap((note) => prose(note, {}))], options))
