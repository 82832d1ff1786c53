/**
 * The local engine off the main thread: `ExtractionThread` extracts a group
 * of writes in one worker thread shared by the node's spaces (a scoped
 * service: its worker stops with the layer that holds it), started on the
 * first group and stopped after a while without work (compromise, its cues
 * and their heap leave memory with it). Groups run one at a time, in the
 * order sent; the main thread meanwhile stores the group before (DrainLoop).
 *
 * A worker that dies, sends what cannot be read, or takes longer than a
 * generous budget for its group is a loud failure: it is logged, it is
 * stopped, the groups it had fail as ServiceUnavailable (the drain step is
 * retried, its items still queued), and the next group starts a fresh one.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { Worker } from "node:worker_threads"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { type ExtractionOutcome, ExtractionReply, type ExtractionRequest } from "./ExtractionProtocol.ts"

/** How long an idle worker is kept for the next group. */
const IDLE_MS = 30_000
/** A group's budget: far above the few milliseconds per 1,000 characters extraction takes, so only a hang reaches it. */
const budgetMs = (items: ExtractionRequest["items"]) => 30_000 + items.reduce((sum, item) => sum + item.content.length, 0) / 10

const decodeReply = Schema.decodeUnknownEither(ExtractionReply)

type Outcome = Effect.Effect<ReadonlyArray<ExtractionOutcome>, ServiceUnavailable>

export interface ExtractionThreadShape {
  /** Each write's memories (or why it failed), in order; fails only when the worker does. */
  readonly extract: (items: ExtractionRequest["items"]) => Outcome
  /** Whether a worker is running (it is started lazily and stopped when idle). */
  readonly running: () => boolean
}

/** The worker thread behind `entry`, held for the scope: its worker, if any, is stopped when the scope closes. */
const make = (entry: URL) =>
  Effect.gen(function*() {
    let worker: Worker | undefined
    let idle: ReturnType<typeof setTimeout> | undefined
    let nextId = 1
    /** In the order sent: the first is the one the worker is extracting. */
    const pending = new Map<number, (outcome: Outcome) => void>()

    const stopWorker = () => {
      const running = worker
      worker = undefined
      if (running !== undefined) void running.terminate()
    }

    const armIdle = () => {
      if (idle !== undefined) clearTimeout(idle)
      idle = undefined
      if (pending.size > 0) return
      idle = setTimeout(stopWorker, IDLE_MS)
      idle.unref()
    }

    const settle = (id: number, outcome: Outcome) => {
      const done = pending.get(id)
      if (done === undefined) return
      pending.delete(id)
      done(outcome)
      armIdle()
    }

    /** The worker failed: it is stopped, and every group it had fails (each drain step is retried). */
    const lost = (from: Worker, why: string) => {
      if (worker !== from) return
      stopWorker()
      const failure = Effect.logError(`the extraction worker failed and was stopped: ${why}`).pipe(
        Effect.zipRight(Effect.fail(new ServiceUnavailable({ message: `extraction worker failed: ${why}` })))
      )
      for (const id of [...pending.keys()]) settle(id, failure)
    }

    const start = () => {
      const started = new Worker(entry)
      started.unref()
      started.on("message", (raw: unknown) => {
        const decoded = decodeReply(raw)
        if (decoded._tag === "Left") return lost(started, `it sent a message that could not be read: ${decoded.left.message}`)
        const reply = decoded.right
        if (reply.type === "defect") return lost(started, reply.message)
        settle(reply.id, Effect.succeed(reply.outcomes))
      })
      started.on("error", (error) => lost(started, error.message))
      started.on("exit", (code) => lost(started, `it exited with code ${code}`))
      worker = started
      return started
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (idle !== undefined) clearTimeout(idle)
        idle = undefined
        stopWorker()
      })
    )

    const extract = (items: ExtractionRequest["items"]): Outcome =>
      Effect.async<ReadonlyArray<ExtractionOutcome>, ServiceUnavailable>((resume) => {
        if (idle !== undefined) clearTimeout(idle)
        idle = undefined
        const id = nextId++
        const request: ExtractionRequest = { id, items }
        const target = worker ?? start()
        const hung = setTimeout(() => lost(target, `no answer to a group of ${items.length} writes in ${Math.round(budgetMs(items))} ms`), budgetMs(items))
        hung.unref()
        pending.set(id, (outcome) => {
          clearTimeout(hung)
          resume(outcome)
        })
        target.postMessage(request)
        return Effect.sync(() => {
          clearTimeout(hung)
          // An interrupted group's answer, if it comes, is dropped.
          if (pending.delete(id)) armIdle()
        })
      }).pipe(Effect.withSpan("Extractor.inWorker", { attributes: { writes: items.length } }))

    return { extract, running: () => worker !== undefined } satisfies ExtractionThreadShape
  })

/** The node's extraction worker, shared by its spaces (the Space entity's layer holds it). */
export class ExtractionThread extends Context.Tag("engram/ingestion/ExtractionThread")<ExtractionThread, ExtractionThreadShape>() {
  /** The worker of `entry` (tests: one that crashes, to see it replaced). */
  static readonly layer = (entry: URL = new URL("./extract-worker.mjs", import.meta.url)) => Layer.scoped(ExtractionThread, make(entry))
  /** A thread held for the current scope, without a layer (tests). */
  static readonly scoped = make
}
