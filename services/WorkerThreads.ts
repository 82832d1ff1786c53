/**
 * Work off the main thread, on `@effect/platform`'s worker pool: requests
 * are `Schema.TaggedRequest`s, encoded and decoded by the pool and by the
 * worker's runner (`WorkerRunner.layerSerialized` over `NodeWorkerRunner`),
 * so both ends of the thread boundary check what they receive. One pool
 * abstraction serves extraction and document parsing:
 *
 * - Lazy and elastic (`minSize: 0`): no worker until the first request; the
 *   worker leaves (with its libraries and their heap) after `timeToLive`
 *   without work.
 * - A worker that dies (a crash, its heap limit) fails the requests it had
 *   with a `WorkerError`, and the pool starts a fresh one for what follows.
 * - `end(worker)` ends a worker now (a hung request, an interrupted parse
 *   whose synchronous work cannot be interrupted inside the thread, a worker
 *   that died or answered what its schema refuses): its thread is stopped and
 *   it leaves the pool, so what follows goes to a fresh one.
 * - The pool lives in the caller's scope: its workers are closed with it.
 */
import { Worker } from "@effect/platform"
import { WorkerError } from "@effect/platform/WorkerError"
import { NodeWorker } from "@effect/platform-node"
import { Effect, type ParseResult, Pool, type Schema, Scope } from "effect"
import { type ResourceLimits, Worker as NodeThread } from "node:worker_threads"

export interface ThreadPool<I extends Schema.TaggedRequest.All> {
  /**
   * The pool's worker, held for the caller's scope, once the requests before
   * this one leave it room (`executeEffect` for one answer, `execute` for a
   * stream of them).
   */
  readonly worker: Effect.Effect<Worker.SerializedWorker<I>, WorkerError, Scope.Scope>
  /** Ends `worker` now: its thread stops (what it had fails) and it leaves the pool (what follows goes to a fresh one). */
  readonly end: (worker: Worker.SerializedWorker<I>) => Effect.Effect<void>
  /** Whether a worker thread is alive now. */
  readonly running: () => boolean
}

export const makeThreadPool = <I extends Schema.TaggedRequest.All>(options: {
  /** The worker's entry module. */
  readonly entry: URL
  /**
   * The pool: `{ minSize: 0, maxSize: 1, timeToLive }` (one worker: `end`
   * counts on it) for one lazy worker
   * kept `timeToLive` after its last request; `concurrency` is how many
   * requests one worker is sent at a time (it runs them in order: more than
   * one keeps it busy while answers travel back).
   */
  readonly pool: Worker.SerializedWorkerPool.Options<I>
  readonly resourceLimits?: ResourceLimits
}): Effect.Effect<ThreadPool<I>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const threads = new Set<NodeThread>()
    const spawn = () => {
      const thread = new NodeThread(options.entry, options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits })
      // A worker never holds the process open: the pool's scope ends it.
      thread.unref()
      threads.add(thread)
      thread.once("exit", () => threads.delete(thread))
      return thread
    }
    // After the pool's own close (finalizers run in reverse): a thread still there is ended, and awaited.
    yield* Effect.addFinalizer(() =>
      Effect.forEach([...threads], (thread) => Effect.promise(() => thread.terminate()), { discard: true })
    )
    // Made on first use, in the caller's scope: making the pool starts a worker (to report a spawn error at once).
    const scope = yield* Effect.scope
    const pool = yield* Effect.cached(
      Worker.makePoolSerialized<I>(options.pool).pipe(Effect.provide(NodeWorker.layer(spawn)), Scope.extend(scope), Effect.orDie)
    )
    return {
      worker: Effect.flatMap(pool, (made) => made.backing.get),
      // The pool holds one worker (maxSize 1), so its threads are that worker's.
      end: (worker) =>
        Effect.sync(() => {
          for (const thread of threads) void thread.terminate()
        }).pipe(Effect.zipRight(Effect.scoped(Effect.flatMap(pool, (made) => Pool.invalidate(made.backing, worker))))),
      running: () => threads.size > 0
    }
  })

/**
 * What went wrong with a worker, in words. A worker that died fails its
 * requests with a WorkerError, which the pool passes through the request's
 * failure schema: it arrives as a ParseError around that WorkerError.
 */
export const workerFailure = (error: WorkerError | ParseResult.ParseError): string => {
  const inner = error._tag === "ParseError" && error.issue.actual instanceof WorkerError ? error.issue.actual : error
  if (inner._tag === "ParseError") return inner.message
  const why = inner.cause instanceof Error ? inner.cause.message : String(inner.cause ?? inner.message)
  return inner.reason === "unknown" ? why : `${inner.reason}: ${why}`
}
