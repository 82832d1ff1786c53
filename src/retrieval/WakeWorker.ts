/**
 * The wake thread's body: a woken space's words, whose postings it builds
 * at once, then the word parts of the vectors it is to make (`WakeJob`);
 * each answer posted back in order, moved rather than copied. The thread
 * lives for one wake.
 */
import { Schema } from "effect"
import { parentPort } from "node:worker_threads"
import { runVectorsJob, runWordsJob, WakeJob, type WakeReply, type WordsJob } from "./WakeJob.ts"

const port = parentPort
if (port === null) throw new Error("WakeWorker.ts runs only as a worker thread")

const decode = Schema.decodeUnknownEither(WakeJob)
const movable = (buffers: ReadonlyArray<ArrayBufferLike>) => buffers.filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer)
const failed = (message: string) => port.postMessage({ type: "failed", message } satisfies WakeReply)

let words: WordsJob | undefined

port.on("message", (raw: unknown) => {
  const job = decode(raw)
  if (job._tag === "Left") return failed(`the wake thread got a job it could not read: ${job.left.message}`)
  try {
    if (job.right.type === "words") {
      words = job.right
      const postings = runWordsJob(words)
      const reply: WakeReply = { type: "postings", postings }
      return port.postMessage(reply, movable([postings.lengths.buffer, postings.termStarts.buffer, postings.slots.buffer, postings.counts.buffer]))
    }
    if (words === undefined) return failed("the wake thread was asked for vectors before it had the words")
    runVectorsJob(words, job.right, (from, vectors, codes, scales) => {
      const chunk: WakeReply = { type: "chunk", from, vectors, codes, scales }
      port.postMessage(chunk, movable([vectors.buffer, codes.buffer, scales.buffer]))
    })
    port.postMessage({ type: "vectors" } satisfies WakeReply)
  } catch (cause) {
    failed(`the wake thread failed: ${String(cause)}`)
  }
})
