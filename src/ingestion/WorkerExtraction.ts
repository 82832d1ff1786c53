/**
 * The local engine off the main thread: `ExtractionThread` extracts a group
 * of writes in one worker thread shared by the node's spaces, on the node's
 * thread pool (services/WorkerThreads.ts: a scoped service, so its worker
 * stops with the layer that holds it), started on the first group and
 * stopped after a while without work (compromise, its cues and their heap
 * leave memory with it). Groups run one at a time, in the order sent; the
 * main thread meanwhile stores the group before (DrainLoop).
 *
 * A worker that dies, sends what cannot be read, or takes longer than a
 * generous budget for its group is a loud failure: it is logged, it is
 * stopped, the groups it had fail as ServiceUnavailable (the drain step is
 * retried, its items still queued), and the next group goes to a fresh one.
 */
import { Context, Duration, Effect, Layer } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { makeThreadPool, workerFailure } from "../../services/WorkerThreads.ts"
import { ExtractGroup, type ExtractionItem, type ExtractionOutcome } from "./ExtractionProtocol.ts"

/** How long an idle worker is kept for the next group. */
const IDLE = Duration.seconds(30)
/** A group's budget: far above the few milliseconds per 1,000 characters extraction takes, so only a hang reaches it. */
const budgetMs = (items: ReadonlyArray<ExtractionItem>) => 30_000 + items.reduce((sum, item) => sum + item.content.length, 0) / 10

type Outcome = Effect.Effect<ReadonlyArray<ExtractionOutcome>, ServiceUnavailable>

export interface ExtractionThreadShape {
  /** Each write's memories (or why it failed), in order; fails only when the worker does. */
  readonly extract: (items: ReadonlyArray<ExtractionItem>) => Outcome
  /** Whether a worker is running (it is started lazily and stopped when idle). */
  readonly running: () => boolean
}

/** The worker thread behind `entry`, held for the scope: its worker, if any, is stopped when the scope closes. */
const make = (entry: URL) =>
  Effect.gen(function*() {
    // Two groups in flight: the next is with the worker while the answer to the one before travels back.
    const threads = yield* makeThreadPool<ExtractGroup>({ entry, pool: { minSize: 0, maxSize: 1, timeToLive: IDLE, concurrency: 2 } })
    const failed = (why: string) =>
      Effect.logError(`the extraction worker failed and was stopped: ${why}`).pipe(
        Effect.zipRight(Effect.fail(new ServiceUnavailable({ message: `extraction worker failed: ${why}` })))
      )
    const extract = (items: ReadonlyArray<ExtractionItem>): Outcome =>
      Effect.scoped(Effect.gen(function*() {
        const worker = yield* threads.worker
        return yield* worker.executeEffect(new ExtractGroup({ items })).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(budgetMs(items)),
            onTimeout: () => `no answer to a group of ${items.length} writes in ${Math.round(budgetMs(items))} ms` as const
          }),
          // A worker that hung, died or answered what its schema refuses is ended; the next group gets a fresh one.
          Effect.catchAll((error) => Effect.zipRight(threads.end(worker), failed(typeof error === "string" ? error : workerFailure(error))))
        )
      })).pipe(
        Effect.catchTag("WorkerError", (error) => failed(workerFailure(error))),
        Effect.withSpan("Extractor.inWorker", { attributes: { writes: items.length } })
      )
    return { extract, running: threads.running } satisfies ExtractionThreadShape
  })

/** The node's extraction worker, shared by its spaces (the Space entity's layer holds it). */
export class ExtractionThread extends Context.Tag("engram/ingestion/ExtractionThread")<ExtractionThread, ExtractionThreadShape>() {
  /** The worker of `entry` (tests: one that crashes, to see it replaced). */
  static readonly layer = (entry: URL = new URL("./extract-worker.mjs", import.meta.url)) => Layer.scoped(ExtractionThread, make(entry))
  /** A thread held for the current scope, without a layer (tests). */
  static readonly scoped = make
}
