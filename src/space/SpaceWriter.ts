/**
 * The one write path of a space. Every change to its rows and its index goes
 * through here, one at a time (a semaphore of one permit), and each is atomic
 * from the caller's view: the transaction commits and then the index follows,
 * or neither changes. Model calls (extraction, embedding) happen before a
 * change takes the permit, so recall and other writers never wait on them.
 */
import { Cause, Clock, Effect, Either, Option } from "effect"
import { InternalError, NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import type { IndexedMemory } from "../domain/Memory.ts"
import type { MemoryEdit } from "../domain/SpaceProtocol.ts"
import type { ItemOutcome, JobRepo, QueuedItem } from "../../services/store/JobRepo.ts"
import type { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import type { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import type { DocumentWrites } from "../../services/store/MemoryRows.ts"
import type { SpaceState } from "./SpaceState.ts"
import type { PreparedItem } from "./WritePreparation.ts"

type Vector = { readonly vector: Float32Array; readonly embedder: string } | null

/**
 * A defect while changing the space (the store refusing a statement, a bug)
 * fails that one change with a typed 500 and is logged with its cause; the
 * space goes on serving.
 */
export const containDefects = (operation: string, space: SpaceRef) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | InternalError, R> =>
  Effect.catchAllDefect(effect, (defect) =>
    Effect.logError(`${operation} failed`, Cause.die(defect)).pipe(
      Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId }),
      Effect.zipRight(Effect.fail(new InternalError({ message: `${operation} failed; the error was logged` })))
    ))

export const makeWriter = (deps: {
  readonly space: SpaceRef
  readonly state: SpaceState
  readonly repo: MemoryRepo
  readonly jobs: JobRepo
  readonly spaces: SpaceRepo
  /** Forgets that the space was loaded (after it was deleted). */
  readonly unload: () => void
  /** Waits for recalls in progress and takes a turn of its own before a change starts. */
  readonly beforeHeavyWrite: Effect.Effect<void>
  /** The vector of an edited text (outside the permit). */
  readonly embedOne: (text: string) => Effect.Effect<Vector, ServiceUnavailable>
}) =>
  Effect.gen(function*() {
    const { embedOne, jobs, repo, space, spaces, state } = deps
    const permit = yield* Effect.makeSemaphore(1)
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    /** Runs one change of the space alone; a defect fails only this change. */
    const exclusive = (operation: string) =>
    <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      permit.withPermits(1)(Effect.zipRight(deps.beforeHeavyWrite, effect)).pipe(
        containDefects(operation, space),
        Effect.withSpan(`Space.${operation}`)
      )

    /** A synchronous write: stored, then indexed; answers the stored memories. */
    const write = (prepared: DocumentWrites) =>
      Effect.gen(function*() {
        const at = yield* now
        const stored = yield* repo.statement(repo.insertDocuments(space, [prepared], state.nextPosition, at))
        state.apply(stored)
        return stored.memories
      }).pipe(exclusive("write"))

    /**
     * A group of queued items, stored and settled in one transaction: an item
     * is marked done in the transaction that stores its memories, so exactly
     * once even across a crash or a second owner; items cancelled meanwhile
     * are not stored. An item whose preparation failed is marked failed.
     */
    const storeQueued = (items: ReadonlyArray<QueuedItem>, prepared: ReadonlyArray<PreparedItem>) =>
      Effect.gen(function*() {
        const at = yield* now
        const outcomes = items.map((item, i): ItemOutcome =>
          Either.match(prepared[i]!, {
            onLeft: (error) => ({ _tag: "Failed", item, error }),
            onRight: (write) => ({ _tag: "Completed", item, memoryIds: write.memories.map((m) => m.id) })
          })
        )
        const stored = yield* repo.transaction(Effect.gen(function*() {
          const settled = yield* jobs.settle(outcomes, at)
          const live = new Set(settled.map((row) => `${row.job_id}/${row.position}`))
          const writes = items.flatMap((item, i) => {
            const write = prepared[i]!
            return Either.isRight(write) && live.has(`${item.jobId}/${item.position}`) ? [write.right] : []
          })
          return yield* repo.insertDocuments(space, writes, state.nextPosition, at)
        }))
        state.apply(stored)
      }).pipe(exclusive("storeQueued"), Effect.annotateSpans({ items: items.length }))

    /** Marks queued items failed, with nothing stored. */
    const failQueued = (items: ReadonlyArray<QueuedItem>, error: string) =>
      Effect.gen(function*() {
        const at = yield* now
        yield* repo.transaction(jobs.settle(items.map((item) => ({ _tag: "Failed", item, error })), at))
      }).pipe(exclusive("failQueued"))

    const missing = (id: string) => new NotFound({ message: `memory ${id} not found` })

    /** Edits, retires or restores a memory; a new text gets its vector before the permit is taken. */
    const edit = (change: MemoryEdit) =>
      Effect.gen(function*() {
        const before = state.get(change.memoryId)
        if (before === undefined) return yield* missing(change.memoryId)
        const textChanged = (memory: IndexedMemory) => change.text !== undefined && change.text !== memory.text
        const early = textChanged(before) ? yield* embedOne(change.text!) : null
        return yield* Effect.gen(function*() {
          // Re-read under the permit: a concurrent change may have replaced or deleted it meanwhile.
          const memory = state.get(change.memoryId)
          if (memory === undefined) return yield* missing(change.memoryId)
          const text = change.text ?? memory.text
          const vector = !textChanged(memory) ? null : early ?? (yield* embedOne(text))
          const next = {
            text,
            context: change.context ?? memory.context,
            metadata: change.metadata ?? memory.metadata,
            tags: change.tags ?? memory.tags,
            state: change.state ?? memory.state,
            embedding: vector
          }
          const kind = next.state !== memory.state ? (next.state === "retired" ? "retired" : "restored") : "edited"
          const at = yield* now
          const updated = yield* repo.transaction(repo.update(memory, next, kind, at))
          if (Option.isNone(updated)) return yield* missing(change.memoryId)
          state.put(updated.value)
          return updated.value
        }).pipe(exclusive("edit"))
      })

    /** Deletes a memory; answers whether it existed. */
    const forget = (id: string) =>
      Effect.gen(function*() {
        const deleted = yield* repo.transaction(repo.delete(space, id))
        if (deleted) state.remove(id)
        return deleted
      }).pipe(exclusive("forget"))

    /** Deletes the space with everything in it; the index goes too. Answers whether it existed. */
    const deleteSpace = Effect.gen(function*() {
      const deleted = yield* repo.transaction(spaces.delete(space))
      state.clear()
      deps.unload()
      return deleted
    }).pipe(exclusive("deleteSpace"))

    return { write, storeQueued, failQueued, edit, forget, deleteSpace }
  })

export type SpaceWriter = Effect.Effect.Success<ReturnType<typeof makeWriter>>
