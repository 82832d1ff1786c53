/** JPEG and PNG images: the text OCR reads in them, as one page. */
import { Effect } from "effect"
import { lazyOcr } from "./Ocr.ts"
import { type Parser, prose } from "./Shared.ts"

export const parseImage: Parser = (bytes, options, fail) =>
  Effect.gen(function* () {
    const recognize = yield* lazyOcr(options.cachePath)
    const text = yield* recognize(bytes, fail)
    options.onProgress?.(1, 1)
    return { sections: prose(text, { ocr: true }), units: { kind: "pages", count: 1 }, ocrPages: 1 }
  })
