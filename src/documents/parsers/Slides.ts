/** PowerPoint: PPTX through officeparser, legacy PPT by walking its records. */
import { Effect } from "effect"
import { type OfficeContentNode, OfficeParser } from "officeparser"
import { type CompoundFile, readCompoundFile } from "../Formats.ts"
import { asBuffer, attempt, oneLine, type Parser, prose, type Section, tidy, u32 } from "./Shared.ts"

const officeText = (nodes: ReadonlyArray<OfficeContentNode> | undefined): string =>
  (nodes ?? []).map((node) => {
    if (node.type === "table") {
      return (node.children ?? []).map((row) => (row.children ?? []).map((cell) => oneLine(officeText(cell.children) || (cell.text ?? ""))).join(" | ")).join("\n")
    }
    if (node.text !== undefined && (node.type === "paragraph" || node.type === "heading" || node.type === "text")) return node.text
    return officeText(node.children)
  }).filter((text) => text.trim() !== "").join("\n")

export const parsePptx: Parser = (bytes, options, fail) =>
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

export const parsePpt: Parser = (bytes, options, fail) =>
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
