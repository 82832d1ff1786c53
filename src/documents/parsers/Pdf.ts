/** PDF: each page's text layer, or OCR of the page's images where a scan has none. */
import { Effect } from "effect"
import { PNG } from "pngjs"
import { getDocumentProxy, getResolvedPDFJS } from "unpdf"
import { yieldToIo } from "../../../services/EventLoop.ts"
import { lazyOcr, type Recognize } from "./Ocr.ts"
import { attempt, describe, type Fail, isRecord, ParseError, type Parser, prose, type Section, tidy } from "./Shared.ts"

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

export const parsePdf: Parser = (bytes, options, fail) =>
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
