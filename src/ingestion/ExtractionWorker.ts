/**
 * The extraction worker's body: groups of writes from the main thread,
 * extracted with the local engine (compromise and its cues load here, on the
 * first group), each write's memories or failure posted back in order. The
 * tagging then takes this thread's core while the main thread stores the
 * group before.
 */
import { Schema } from "effect"
import { parentPort } from "node:worker_threads"
import { ExtractionRequest, type ExtractionOutcome, type ExtractionReply } from "./ExtractionProtocol.ts"
import { extractLocal, type ExtractionInput, extractVerbatim } from "./Extractor.ts"
import { lowerThisThread } from "../../services/ThreadPriority.ts"

const port = parentPort
if (port === null) throw new Error("ExtractionWorker.ts runs only as a worker thread")
// Requests first: this thread takes the cores the main thread leaves (services/ThreadPriority.ts).
lowerThisThread()

const post = (message: ExtractionReply) => port.postMessage(message)

const decode = Schema.decodeUnknownEither(ExtractionRequest)

const extractOne = (item: ExtractionRequest["items"][number]): ExtractionOutcome => {
  const input: ExtractionInput = {
    content: item.content,
    eventTime: item.eventTime,
    speaker: item.speaker ?? undefined,
    fromAgent: item.fromAgent,
    scopeIds: item.scopeIds,
    guidance: item.guidance ?? undefined
  }
  try {
    return { ok: true, memories: item.verbatim ? extractVerbatim(input) : extractLocal(input) }
  } catch (cause) {
    return { ok: false, message: `extraction failed: ${String(cause)}` }
  }
}

// Synchronous, so one group at a time, in the order sent.
port.on("message", (raw: unknown) => {
  const decoded = decode(raw)
  if (decoded._tag === "Left") {
    const id = typeof raw === "object" && raw !== null && "id" in raw && typeof raw.id === "number" ? raw.id : -1
    post({ id, type: "defect", message: `the worker got a request it could not read: ${decoded.left.message}` })
    return
  }
  post({ id: decoded.right.id, type: "done", outcomes: decoded.right.items.map(extractOne) })
})
