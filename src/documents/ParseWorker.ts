/**
 * The parsing worker's body: one request at a time from the main thread,
 * parsed with the same parsers, progress and the outcome posted back. The
 * format libraries' synchronous work (a workbook read, a PDF's text layer)
 * then blocks this thread, never the one serving HTTP.
 */
import { Cause, Effect, Exit, Schema } from "effect"
import { parentPort } from "node:worker_threads"
import { parseDocument } from "./Parsers.ts"
import { ParseRequest, type WorkerMessage } from "./ParseProtocol.ts"
import { lowerThisThread } from "../../services/ThreadPriority.ts"

const port = parentPort
if (port === null) throw new Error("ParseWorker.ts runs only as a worker thread")
// Requests first: this thread takes the cores the main thread leaves (services/ThreadPriority.ts).
lowerThisThread()

const post = (message: WorkerMessage) => port.postMessage(message)

const handle = async (raw: unknown) => {
  const decoded = Schema.decodeUnknownEither(ParseRequest)(raw)
  if (decoded._tag === "Left") {
    post({ id: -1, type: "defect", message: `the worker got a request it could not read: ${decoded.left.message}` })
    return
  }
  const request = decoded.right
  const exit = await Effect.runPromiseExit(parseDocument(request.bytes, request.filename, request.contentType ?? undefined, {
    cachePath: request.cachePath,
    onProgress: (done, total) => post({ id: request.id, type: "progress", done, total }),
    ...(request.transcriber === null ? {} : { transcriber: request.transcriber })
  }))
  if (Exit.isSuccess(exit)) {
    post({ id: request.id, type: "done", document: exit.value })
    return
  }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") post({ id: request.id, type: "failed", message: failure.value.message })
  else post({ id: request.id, type: "defect", message: Cause.pretty(exit.cause) })
}

// One at a time: a second request waits for the first (the main thread sends one per free worker anyway).
let queue = Promise.resolve()
port.on("message", (raw: unknown) => {
  queue = queue.then(() => handle(raw))
})
