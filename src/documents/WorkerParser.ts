/**
 * Parsing off the main thread: `parseInWorker` has the signature of
 * `parseDocument` and runs it in one shared worker thread, started on the
 * first upload and stopped after a minute without work (its parsers and OCR
 * data leave memory with it). Requests run one at a time, in order.
 *
 * - An interrupted parse (a job cancelled, the space moving) stops the
 *   worker; the requests behind it go to a fresh one.
 * - A worker that dies (a parser crashing, or passing its heap limit on a
 *   hostile file) fails the file it was parsing as a defect (the job fails,
 *   the error is logged); the requests behind it go to a fresh one. The
 *   process and its other spaces go on.
 */
import { Effect, Schema } from "effect"
import { Worker } from "node:worker_threads"
// Shared, not Parsers.ts: the main thread must not load the format libraries (the worker does).
import { ParseError, type ParsedDocument, type ParseOptions } from "./parsers/Shared.ts"
import { type ParseRequest, WorkerMessage } from "./ParseProtocol.ts"

/** How long an idle worker is kept for the next upload. */
const IDLE_MS = 60_000
/** The worker's heap: a file that needs more fails alone. */
const HEAP_MB = 1536

interface Pending {
  readonly request: ParseRequest
  readonly onProgress: ((done: number, total: number) => void) | undefined
  readonly done: (outcome: Effect.Effect<ParsedDocument, ParseError>) => void
}

const decodeMessage = Schema.decodeUnknownEither(WorkerMessage)

let worker: Worker | undefined
let idle: ReturnType<typeof setTimeout> | undefined
let nextId = 1
/** In the order sent: the first is the one the worker is parsing. */
const pending = new Map<number, Pending>()

const stopWorker = () => {
  const running = worker
  worker = undefined
  if (running !== undefined) void running.terminate()
}

const settle = (id: number, outcome: Effect.Effect<ParsedDocument, ParseError>) => {
  const entry = pending.get(id)
  if (entry === undefined) return
  pending.delete(id)
  entry.done(outcome)
  if (pending.size === 0) {
    if (idle !== undefined) clearTimeout(idle)
    idle = setTimeout(stopWorker, IDLE_MS)
    idle.unref()
  }
}

/** The worker died with requests in hand: the one it was parsing fails, the rest go to a fresh worker. */
const lost = (from: Worker, why: string) => {
  if (worker !== from) return
  worker = undefined
  const [first] = pending.keys()
  if (first !== undefined) settle(first, Effect.die(new Error(`the parsing worker stopped: ${why}`)))
  resendPending()
}

/** The requests still waiting, to a fresh worker (the one that had them stopped). */
const resendPending = () => {
  if (pending.size === 0) return
  const again = start()
  for (const entry of pending.values()) again.postMessage(entry.request)
}

const start = () => {
  const started = new Worker(new URL("./parse-worker.mjs", import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: HEAP_MB }
  })
  started.unref()
  started.on("message", (raw: unknown) => {
    const decoded = decodeMessage(raw)
    if (decoded._tag === "Left") return lost(started, `it sent a message that could not be read: ${decoded.left.message}`)
    const message = decoded.right
    switch (message.type) {
      case "progress":
        return pending.get(message.id)?.onProgress?.(message.done, message.total)
      case "done":
        return settle(message.id, Effect.succeed(message.document))
      case "failed":
        return settle(message.id, Effect.fail(new ParseError({ message: message.message })))
      case "defect":
        return settle(message.id, Effect.die(new Error(message.message)))
    }
  })
  started.on("error", (error) => lost(started, error.message))
  started.on("exit", (code) => lost(started, `it exited with code ${code}`))
  worker = started
  return started
}

export const parseInWorker = (
  bytes: Uint8Array,
  filename: string,
  contentType: string | undefined,
  options: ParseOptions
): Effect.Effect<ParsedDocument, ParseError> =>
  Effect.async<ParsedDocument, ParseError>((resume) => {
    if (idle !== undefined) clearTimeout(idle)
    idle = undefined
    const id = nextId++
    const request: ParseRequest = {
      id,
      // A copy: the caller's bytes may be a view into a larger buffer.
      bytes: new Uint8Array(bytes),
      filename,
      contentType: contentType ?? null,
      cachePath: options.cachePath,
      transcriber: options.transcriber ?? null
    }
    pending.set(id, { request, onProgress: options.onProgress, done: resume })
    ;(worker ?? start()).postMessage(request)
    return Effect.sync(() => {
      if (!pending.has(id)) return
      const [first] = pending.keys()
      pending.delete(id)
      // Stopping the parse under way means stopping its worker; the others move to a fresh one.
      if (first === id && worker !== undefined) {
        stopWorker()
        resendPending()
      }
    })
  }).pipe(Effect.withSpan("Parsers.parseInWorker", { attributes: { filename, bytes: bytes.length } }))
