/**
 * Parsing off the main thread: `ParseThread.parse` has the signature of
 * `parseDocument` and runs it in one worker thread shared by the node's
 * spaces, on the node's thread pool (services/WorkerThreads.ts: a scoped
 * service, so its worker stops with the layer that holds it), started on the
 * first upload and stopped after a minute without work (its parsers and OCR
 * data leave memory with it). Files are parsed one at a time, in order.
 *
 * - An interrupted parse (a job cancelled, the space moving) stops the
 *   worker; the files behind it go to a fresh one.
 * - A worker that dies (a parser crashing, or passing its heap limit on a
 *   hostile file) fails the file it was parsing as a defect (the job fails,
 *   the error is logged); the files behind it go to a fresh one. The
 *   process and its other spaces go on.
 */
import { Context, Duration, Effect, Layer, Stream } from "effect"
import { makeThreadPool, workerFailure } from "../../services/WorkerThreads.ts"
// Shared, not Parsers.ts: the main thread must not load the format libraries (the worker does).
import { ParseError, type ParsedDocument, type ParseOptions } from "./parsers/Shared.ts"
import { ParseFile } from "./ParseProtocol.ts"

/** How long an idle worker is kept for the next upload. */
const IDLE = Duration.minutes(1)
/** The worker's heap: a file that needs more fails alone. */
const HEAP_MB = 1536

export interface ParseThreadShape {
  readonly parse: (
    bytes: Uint8Array,
    filename: string,
    contentType: string | undefined,
    options: ParseOptions
  ) => Effect.Effect<ParsedDocument, ParseError>
  /** Whether a worker is running (it is started lazily and stopped when idle). */
  readonly running: () => boolean
}

const make = (entry: URL) =>
  Effect.gen(function*() {
    const threads = yield* makeThreadPool<ParseFile>({
      entry,
      pool: { minSize: 0, maxSize: 1, timeToLive: IDLE, concurrency: 1 },
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB }
    })
    const parse: ParseThreadShape["parse"] = (bytes, filename, contentType, options) =>
      Effect.scoped(Effect.gen(function*() {
        const request = new ParseFile({
          // A copy: the caller's bytes may be a view into a larger buffer.
          bytes: new Uint8Array(bytes),
          filename,
          contentType: contentType ?? null,
          cachePath: options.cachePath,
          transcriber: options.transcriber ?? null
        })
        // The worker, once the files before this one are done with it.
        const worker = yield* threads.worker
        let document: ParsedDocument | undefined
        yield* worker.execute(request).pipe(
          Stream.runForEach((answer) =>
            Effect.sync(() => {
              if (answer._tag === "ParseProgress") options.onProgress?.(answer.done, answer.total)
              else document = answer.document
            })
          ),
          // Its synchronous work cannot be interrupted inside the thread: stopping this parse stops the worker,
          // and the files behind it go to a fresh one (not to this one, on its way out).
          Effect.onInterrupt(() => threads.end(worker))
        )
        if (document === undefined) return yield* Effect.die(new Error("the parsing worker answered without a document"))
        return document
      })).pipe(
        Effect.catchAll((error) =>
          error._tag === "ParseFailed"
            ? Effect.fail(new ParseError({ message: error.message }))
            : Effect.die(new Error(`the parsing worker stopped: ${workerFailure(error)}`))
        ),
        Effect.withSpan("Parsers.parseInWorker", { attributes: { filename, bytes: bytes.length } })
      )
    return { parse, running: threads.running } satisfies ParseThreadShape
  })

/** The node's parsing worker, shared by its spaces (the Space entity's layer holds it). */
export class ParseThread extends Context.Tag("engram/documents/ParseThread")<ParseThread, ParseThreadShape>() {
  static readonly layer = (entry: URL = new URL("./parse-worker.mjs", import.meta.url)) => Layer.scoped(ParseThread, make(entry))
}
