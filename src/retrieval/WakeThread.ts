/**
 * A worker thread that builds the heavy parts of a waking space's index
 * (`WakeJob`: keyword postings, most vectors made from words) while the main
 * thread reads the rest of its snapshot. Started when a large space starts
 * waking (its start overlaps reading the snapshot), given one space's jobs,
 * stopped when the wake ends. A thread that fails, answers what cannot be
 * read or does not answer within ANSWER_BUDGET_MS fails its jobs with the
 * reason; the caller then builds the same parts on the main thread and says
 * so in its log.
 */
import { Either, Schema } from "effect"
import { Worker } from "node:worker_threads"
import type { BulkPostings } from "./Bm25.ts"
import { type VectorsJob, WakeJob, WakeReply, type WordsJob } from "./WakeJob.ts"

/** Below this many memories the main thread does it all: a thread's start would cost more than it saves. */
export const OFF_THREAD_FROM = 10_000

/**
 * The share of the vectors the thread makes; the main thread makes the rest
 * once it has read the snapshot. Profiled at 100,000 memories of real turns
 * with two thirds: the thread's postings and vectors took 570 ms from its
 * job, the main thread's reading and its third 650 ms, a third of the
 * vectors taking it 150 ms: at four fifths the two finish together.
 */
export const THREAD_SHARE = 0.8

const decodeReply = Schema.decodeUnknownEither(WakeReply)
const encodeJob = Schema.encodeSync(WakeJob)

/**
 * What is being built on a thread for a bulk load: the postings, and the
 * vectors of documents `from` to `to - 1`, each already in the index when
 * `made` succeeds.
 */
export interface PartsAhead {
  readonly postings: Promise<Either.Either<BulkPostings, string>>
  readonly vectors: { readonly from: number; readonly to: number; readonly made: Promise<Either.Either<void, string>> } | undefined
}

export interface WakeThread {
  /** The postings of these words (the vectors asked for next are of the same documents). */
  readonly words: (job: WordsJob) => Promise<Either.Either<BulkPostings, string>>
  /** Hands each chunk of vectors to `chunk` as it comes; done when all have come. */
  readonly vectors: (job: VectorsJob, chunk: (from: number, vectors: Float32Array, codes: Int8Array, scales: Float32Array) => void) => Promise<Either.Either<void, string>>
  readonly stop: () => void
}

interface Answer {
  readonly resume: (reply: Either.Either<WakeReply, string>) => void
  readonly chunk?: ((from: number, vectors: Float32Array, codes: Int8Array, scales: Float32Array) => void) | undefined
}

/** How long a job may go unanswered before the thread is taken for hung: far above the second a million memories take. */
export const ANSWER_BUDGET_MS = 60_000

export const startWakeThread = (
  entry: URL = new URL("./wake-worker.mjs", import.meta.url),
  budgetMs: number = ANSWER_BUDGET_MS
): WakeThread => {
  const worker = new Worker(entry)
  worker.unref()
  let failed: string | undefined
  /** In the order sent: the thread answers its jobs in order. */
  const answers: Array<Answer> = []
  // Armed while a job waits for its answer: a thread that never answers fails its jobs, and the wake goes on without it.
  let hung: ReturnType<typeof setTimeout> | undefined
  const watch = () => {
    if (hung !== undefined) clearTimeout(hung)
    hung = undefined
    if (answers.length === 0 || failed !== undefined) return
    hung = setTimeout(() => {
      fail(`no answer in ${budgetMs} ms`)
      void worker.terminate()
    }, budgetMs)
    hung.unref()
  }
  const fail = (why: string) => {
    failed ??= why
    for (const answer of answers.splice(0)) answer.resume(Either.left(why))
    watch()
  }
  worker.on("message", (raw: unknown) => {
    const reply = decodeReply(raw)
    if (Either.isLeft(reply)) return fail(`it answered what could not be read: ${reply.left.message}`)
    const body = reply.right
    if (body.type === "failed") return fail(body.message)
    if (body.type === "chunk") {
      const waiting = answers[0]?.chunk
      if (waiting === undefined) return fail("it sent vectors nobody asked for")
      waiting(body.from, body.vectors, body.codes, body.scales)
      return watch()
    }
    answers.shift()?.resume(Either.right(body))
    watch()
  })
  worker.on("error", (error) => fail(error.message))
  worker.on("exit", (code) => fail(`it exited with code ${code}`))
  const send = (job: WakeJob, moved: ReadonlyArray<ArrayBufferLike>, chunk?: Answer["chunk"]) =>
    new Promise<Either.Either<WakeReply, string>>((resume) => {
      if (failed !== undefined) return resume(Either.left(failed))
      answers.push({ resume, chunk })
      if (answers.length === 1) watch()
      // Every array is made for the job: moved, not copied.
      worker.postMessage(encodeJob(job), moved.filter((buffer): buffer is ArrayBuffer => buffer instanceof ArrayBuffer))
    })
  return {
    words: (job) =>
      send(job, [job.bytes.buffer, job.starts.buffer, job.ends.buffer, job.termOfWord.buffer]).then(Either.flatMap((reply) =>
        reply.type === "postings" ? Either.right(reply.postings) : Either.left(`it answered ${reply.type} to the words`)
      )),
    vectors: (job, chunk) =>
      send(job, [job.weights.buffer, job.vectors.buffer], chunk).then(Either.flatMap((reply) =>
        reply.type === "vectors" ? Either.right(undefined) : Either.left(`it answered ${reply.type} to the vectors`)
      )),
    stop: () => {
      fail("stopped")
      void worker.terminate()
    }
  }
}
