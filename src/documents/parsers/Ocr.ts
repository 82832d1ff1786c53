/** The OCR engine: one tesseract.js worker a parse, reading the English model from the caller's cache directory. */
import { Effect, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { access, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { gunzip } from "node:zlib"
import { createWorker, OEM, type Worker } from "tesseract.js"
import { asBuffer, attempt, describe, type Fail, ParseError, requireCjs, tidy } from "./Shared.ts"

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

export type Recognize = (image: Uint8Array, fail: Fail) => Effect.Effect<string, ParseError, Scope.Scope>

/** One tesseract worker for the whole parse, started on first use and terminated with the parse's scope. */
export const lazyOcr = (cachePath: string): Effect.Effect<Recognize> =>
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
