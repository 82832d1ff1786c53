/** Spreadsheets (XLSX, XLS) and CSV through SheetJS: one section a row, each cell under its column header. */
import { Effect } from "effect"
import * as XLSX from "xlsx"
import { yieldToIo } from "../../../services/EventLoop.ts"
import { attempt, decodeText, type Extracted, type ParseOptions, type Parser, rowSections, type Section } from "./Shared.ts"

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

export const parseWorkbook: Parser = (bytes, options, fail) =>
  Effect.flatMap(
    attempt(fail, () => XLSX.read(bytes, { type: "array", cellFormula: false, cellHTML: false, cellStyles: false })),
    (workbook) => sheetSections(workbook, options)
  )

export const parseCsv: Parser = (bytes, options, fail) =>
  Effect.flatMap(
    // raw: values stay as written (no dates or numbers guessed, leading zeros kept).
    attempt(fail, () => XLSX.read(decodeText(bytes), { type: "string", raw: true })),
    (workbook) => sheetSections(workbook, options)
  )
