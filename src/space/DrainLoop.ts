/**
 * The space's queued writes, drained in order by its entity: a group at a
 * time, prepared outside the writer and stored in one transaction. The queue
 * lives in the store, so whichever node owns the space resumes it (after a
 * crash, a restart, or a shard moving). A store that is down fails the step
 * (the loop retries with backoff); a group the store refuses is split, so one
 * bad item fails alone and the rest are stored.
 */
import { Cause, Clock, Effect, Exit, Option } from "effect"
import type { InternalError, ServiceUnavailable } from "../domain/Errors.ts"
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
  readonly jobs: JobRepo
  readonly writer: SpaceWriter
  /** Fails only when the store cannot be read (the space's extraction settings): the step is retried. */
  readonly prepareGroup: (items: ReadonlyArray<QueuedItem>) => Effect.Effect<ReadonlyArray<PreparedItem>, ServiceUnavailable>
}) => {
  const { jobs, prepareGroup, space, writer } = deps

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

  const step: Effect.Effect<LoopStep, ServiceUnavailable | InternalError> = Effect.gen(function*() {
    const group = yield* jobs.nextQueued(space, QUEUED_GROUP_SIZE)
    if (group.length === 0) return { more: false, lagMs: 0 }
    const now = yield* Clock.currentTimeMillis
    const prepared = yield* prepareGroup(group)
    yield* store(group, prepared)
    yield* yieldToIo
    return { more: true, lagMs: now - Math.min(...group.map((item) => item.queuedAt.getTime())) }
  }).pipe(Effect.annotateSpans({ space_id: space.spaceId }))

  return { step }
}
