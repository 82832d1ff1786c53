/**
 * The space's queued writes, drained in order by its entity: a group at a
 * time, prepared outside the writer and stored in one transaction. The queue
 * lives in the store, so whichever node owns the space resumes it (after a
 * crash, a restart, or a shard moving). A store that is down fails the step
 * (the loop retries with backoff); a group the store refuses is split, so one
 * bad item fails alone and the rest are stored.
 *
 * Pipelined: while a group is stored, the next queued items after it are
 * already being prepared (extraction on the node's worker thread), and the
 * next step stores them if they are still exactly the queue's first items.
 * Only this loop writes, one group after the other; a prepared group whose
 * items are no longer at the head of the queue (the group before failed to
 * store, or its items changed) is dropped and its items read and prepared
 * again, so nothing is stored twice, out of order, or lost.
 *
 * The fibers preparing groups ahead run in the scope the drain is made in
 * (the entity's): when the entity stops, a group still being prepared is
 * interrupted with it, never left running behind it.
 */
import { Cause, Clock, Effect, Exit, Fiber, Metric, Option, type Scope, Tracer } from "effect"
import { queueProcessing } from "../observability/Metrics.ts"
import type { InternalError, ServiceUnavailable } from "../domain/Errors.ts"
import type { ExtractionSettingsValues } from "../domain/ExtractionSettings.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import type { JobRepo, QueuedItem } from "../../services/store/JobRepo.ts"
import type { LoopStep } from "./SupervisedLoop.ts"
import type { SpaceWriter } from "./SpaceWriter.ts"
import { yieldToIo } from "../../services/EventLoop.ts"
import type { PreparedItem } from "./WritePreparation.ts"

/** Queued items stored per transaction: the statements per group stay constant, so a larger group amortises them. */
export const QUEUED_GROUP_SIZE = 50

export const makeDrain = (deps: {
  readonly space: SpaceRef
  readonly jobs: Pick<JobRepo, "nextQueued">
  readonly writer: Pick<SpaceWriter, "storeQueued" | "failQueued">
  /** The space's extraction settings as stored now (read before a group is prepared, never while one is stored). */
  readonly settings: Effect.Effect<ExtractionSettingsValues, ServiceUnavailable>
  /** Fails only when extraction cannot run at all (its worker failed): the step is retried. */
  readonly prepareGroup: (
    items: ReadonlyArray<QueuedItem>,
    settings: ExtractionSettingsValues
  ) => Effect.Effect<ReadonlyArray<PreparedItem>, ServiceUnavailable>
}): Effect.Effect<{ readonly step: Effect.Effect<LoopStep, ServiceUnavailable | InternalError> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { jobs, prepareGroup, settings, space, writer } = deps
    const scope = yield* Effect.scope

    /** The group after the one being stored, being prepared. */
    let ahead: { readonly items: ReadonlyArray<QueuedItem>; readonly prepared: Fiber.RuntimeFiber<ReadonlyArray<PreparedItem>, ServiceUnavailable> } | undefined

    const dropAhead = Effect.suspend(() => {
      const held = ahead
      ahead = undefined
      return held === undefined ? Effect.void : Fiber.interrupt(held.prepared)
    })

    /** Whether the prepared items are still, exactly, the first queued ones. */
    const atHead = (items: ReadonlyArray<QueuedItem>, queued: ReadonlyArray<QueuedItem>) =>
      items.length <= queued.length && items.every((item, i) => item.jobId === queued[i]!.jobId && item.position === queued[i]!.position)

    /** Stores a prepared group; if the store refuses it, each item on its own, and an item refused alone fails. */
    const store = (
      items: ReadonlyArray<QueuedItem>,
      prepared: ReadonlyArray<PreparedItem>
    ): Effect.Effect<void, ServiceUnavailable | InternalError> =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(writer.storeQueued(items, prepared))
        if (Exit.isSuccess(exit)) return
        const failure = Cause.failureOption(exit.cause)
        const refused = Option.isSome(failure) && failure.value._tag === "InternalError"
        if (!refused) return yield* exit
        if (items.length === 1) {
          return yield* writer.failQueued(items, "the store refused this item; the error was logged")
        }
        for (const [i, item] of items.entries()) yield* store([item], [prepared[i]!])
      })

    /**
     * The span of storing a group: its jobs, the space and how many items,
     * linked to the span of each request that queued them (kept with the job),
     * so that a trace viewer leads from a write to its storing and back.
     */
    const storeSpan = (group: ReadonlyArray<QueuedItem>) => {
      const jobs = new Map(group.map((item) => [item.jobId, item.trace]))
      return {
        attributes: { job_id: [...jobs.keys()].join(","), org_id: space.orgId, space_id: space.spaceId, items: group.length },
        links: [...jobs].flatMap(([jobId, trace]) =>
          trace === null ? [] : [{ _tag: "SpanLink" as const, span: Tracer.externalSpan(trace), attributes: { job_id: jobId } }])
      }
    }

    const step: Effect.Effect<LoopStep, ServiceUnavailable | InternalError> = Effect.gen(function*() {
      // This group and the next: the next is prepared while this one is stored.
      const queued = yield* jobs.nextQueued(space, 2 * QUEUED_GROUP_SIZE)
      const held = ahead
      ahead = undefined
      if (queued.length === 0) {
        if (held !== undefined) yield* Fiber.interrupt(held.prepared)
        return { more: false, lagMs: 0 }
      }
      const now = yield* Clock.currentTimeMillis
      // Settings are read here, never while a group's transaction holds the store.
      const values = yield* settings
      let group: ReadonlyArray<QueuedItem>
      let preparing: Fiber.RuntimeFiber<ReadonlyArray<PreparedItem>, ServiceUnavailable>
      if (held !== undefined && atHead(held.items, queued)) {
        group = held.items
        preparing = held.prepared
      } else {
        if (held !== undefined) yield* Fiber.interrupt(held.prepared)
        group = queued.slice(0, QUEUED_GROUP_SIZE)
        preparing = yield* Effect.forkIn(prepareGroup(group, values), scope)
      }
      // The next group goes to the worker right behind this one, to be ready by the time this one is stored.
      const next = queued.slice(group.length, group.length + QUEUED_GROUP_SIZE)
      if (next.length > 0) ahead = { items: next, prepared: yield* Effect.forkIn(prepareGroup(next, values), scope) }
      // Operators see the group as processing (engram_queue_items) until it is stored or the step fails.
      yield* Metric.incrementBy(queueProcessing, group.length)
      yield* Effect.gen(function*() {
        const prepared = yield* Fiber.join(preparing).pipe(
          Effect.onInterrupt(() => Fiber.interrupt(preparing)),
          Effect.onError(() => dropAhead)
        )
        // A group that fails to store leaves the queue's head where it was: the next group is prepared again from it.
        yield* Effect.onError(store(group, prepared), () => dropAhead).pipe(Effect.withSpan("Space.storeQueued", storeSpan(group)))
      }).pipe(Effect.ensuring(Metric.incrementBy(queueProcessing, -group.length)))
      yield* yieldToIo
      // Everything read is stored or being prepared: with nothing ahead the queue held no more than this group,
      // and a write queued since sent its own wake (one query fewer per write for a stream of single writes).
      return { more: ahead !== undefined, lagMs: now - Math.min(...group.map((item) => item.queuedAt.getTime())) }
    }).pipe(
      Effect.onInterrupt(() => dropAhead),
      Effect.annotateSpans({ space_id: space.spaceId })
    )

    return { step }
  })
