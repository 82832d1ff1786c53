/**
 * Parsing in the worker thread: the same document as parsing in process,
 * the same errors, progress reported back, the main thread free while a
 * large workbook is read, and an interrupted parse leaving the next one to a
 * fresh worker.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as XLSX from "xlsx"
import { parseDocument } from "../../src/documents/Parsers.ts"
import { ParseThread, type ParseThreadShape } from "../../src/documents/WorkerParser.ts"

/** The node's parsing worker (the layer below holds it for this file's tests). */
const parseInWorker = (...args: Parameters<ParseThreadShape["parse"]>) => Effect.flatMap(ParseThread, (thread) => thread.parse(...args))

const cachePath = mkdtempSync(join(tmpdir(), "engram-worker-ocr-"))
afterAll(() => rmSync(cachePath, { recursive: true, force: true }))

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../fixtures/documents/${name}`, import.meta.url)))

const bigWorkbook = (rows: number) => {
  const book = XLSX.utils.book_new()
  const data = [["Name", "City", "Since", "Notes", "Score"]]
  for (let i = 0; i < rows; i++) data.push([`Person ${i}`, `City ${i % 97}`, String(2000 + (i % 25)), `note number ${i} about things`, String(i % 100)])
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet(data), "People")
  return new Uint8Array(XLSX.write(book, { type: "buffer", bookType: "xlsx" }))
}

/** The longest the main thread went without running a 5 ms timer while `work` ran. */
const longestStall = <A, E, R>(work: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let last = performance.now()
    let longest = 0
    const timer = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
    }, 5)
    yield* Effect.ensuring(work, Effect.sync(() => clearInterval(timer)))
    return longest
  })

layer(ParseThread.layer(), { excludeTestServices: true })("parsing in a worker thread", (it) => {
  it.effect("gives the same document as parsing in process, with progress", () =>
    Effect.gen(function*() {
      for (const name of ["sample.docx", "sample.pptx", "text.pdf", "sample.doc"]) {
        const bytes = fixture(name)
        const progress: Array<[number, number]> = []
        const inWorker = yield* parseInWorker(bytes, name, undefined, { cachePath, onProgress: (done, total) => progress.push([done, total]) })
        const inProcess = yield* parseDocument(bytes, name, undefined, { cachePath })
        expect(inWorker, name).toEqual(inProcess)
        if (name !== "sample.doc") expect(progress.length, name).toBeGreaterThan(0)
      }
      const csv = new TextEncoder().encode("name,city\nAlice,Paris\nBob,Oslo\n")
      expect(yield* parseInWorker(csv, "people.csv", "text/csv", { cachePath })).toEqual(
        yield* parseDocument(csv, "people.csv", "text/csv", { cachePath })
      )
    }), 120_000)

  it.effect("fails an unreadable file with the parser's own message", () =>
    Effect.gen(function*() {
      const broken = fixture("sample.docx").slice(0, 2000)
      const inWorker = yield* Effect.flip(parseInWorker(broken, "broken.docx", undefined, { cachePath }))
      const inProcess = yield* Effect.flip(parseDocument(broken, "broken.docx", undefined, { cachePath }))
      expect(inWorker._tag).toBe("ParseError")
      expect(inWorker.message).toBe(inProcess.message)
      const empty = yield* Effect.flip(parseInWorker(new Uint8Array(0), "empty.txt", undefined, { cachePath }))
      expect(empty.message).toBe("this file is empty")
    }), 60_000)

  it.effect("keeps the main thread free while a large workbook is read", () =>
    Effect.gen(function*() {
      const bytes = bigWorkbook(40_000)
      // Warm both paths (library loading), then compare the stalls of the same parse.
      yield* parseDocument(bytes, "big.xlsx", undefined, { cachePath })
      yield* parseInWorker(bytes, "big.xlsx", undefined, { cachePath })
      const inProcess = yield* longestStall(parseDocument(bytes, "big.xlsx", undefined, { cachePath }))
      const inWorker = yield* longestStall(parseInWorker(bytes, "big.xlsx", undefined, { cachePath }))
      expect(inProcess).toBeGreaterThan(150)
      expect(inWorker, `in process ${inProcess} ms, in the worker ${inWorker} ms`).toBeLessThan(inProcess / 3)
    }), 180_000)

  it.effect("an interrupted parse stops its worker; the next parse gets a fresh one", () =>
    Effect.gen(function*() {
      const bytes = bigWorkbook(40_000)
      const running = yield* Effect.fork(parseInWorker(bytes, "big.xlsx", undefined, { cachePath }))
      const queued = yield* Effect.fork(parseInWorker(new TextEncoder().encode("a,b\n1,2\n"), "queued.csv", undefined, { cachePath }))
      yield* Effect.sleep("100 millis")
      yield* Fiber.interrupt(running)
      const after = yield* Fiber.join(queued)
      expect(after.format).toBe("csv")
      const next = yield* parseInWorker(fixture("sample.docx"), "sample.docx", undefined, { cachePath })
      expect(next.format).toBe("docx")
    }), 120_000)
})
