/**
 * The one write path of a space. Every change to its rows and its index goes
 * through here, one at a time (the index's change lock, one permit), and each is atomic
 * from the caller's view: the transaction commits and then the index follows,
 * or neither changes. Model calls (extraction, embedding) happen before a
 * change takes the permit, so recall and other writers never wait on them.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Data, Effect, Either, Option } from "effect"
import { InternalError, NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { MemoryId, SpaceRef } from "../domain/Ids.ts"
import type { IndexedMemory, Memory } from "../domain/Memory.ts"
import type { MemoryEdit } from "../domain/SpaceProtocol.ts"
import type { ConsolidationRepo, RunRecord, Synthesis } from "../../services/store/ConsolidationRepo.ts"
import type { ItemOutcome, JobRepo, QueuedItem } from "../../services/store/JobRepo.ts"
import type { ModelRepo } from "../../services/store/ModelRepo.ts"
import type { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import type { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import type { OutboxEvent, WebhookRepo } from "../../services/store/WebhookRepo.ts"
import type { LedgerEntry, LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { RATES } from "../metering/Rates.ts"
import { memoryConsolidated, memoryCreated } from "../webhooks/Events.ts"
import type { DocumentWrites } from "../../services/store/MemoryRows.ts"
import { makeProvenance, nothingUnbuilt } from "./Provenance.ts"
import type { IndexMark } from "./IndexMark.ts"
import type { SpaceState } from "./SpaceState.ts"
import type { PreparedItem } from "./WritePreparation.ts"
import { wallClock } from "./SpaceClock.ts"

/** An edited text's vector to store (null from an embedder that makes vectors from words), by its embedder. */
type Vector = { readonly vector: Float32Array | null; readonly embedder: string } | null

/** What a consolidation run changes, planned on the index as it was; applied only if its sources are unchanged. */
export interface Consolidated {
  readonly create: ReadonlyArray<Synthesis>
  readonly update: ReadonlyArray<{ readonly before: Memory; readonly after: Synthesis }>
  readonly remove: ReadonlyArray<MemoryId>
  readonly considered: ReadonlyArray<MemoryId>
  readonly superseded: ReadonlyArray<{ readonly fact: MemoryId; readonly by: MemoryId }>
  /** Every memory the plan read, as it read it: a change to any since means the plan is stale. */
  readonly basedOn: ReadonlyArray<Pick<Memory, "id" | "updatedAt">>
  readonly run: Pick<RunRecord, "engine" | "startedAt">
}

/** How long the writer trusts what it last read about the space having webhooks, in ms. */
const HOOKS_TTL = 5_000

/** The refresh's job was cancelled while it ran: its transaction rolls back. */
class RefreshCancelled extends Data.TaggedError("RefreshCancelled") {}

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
  readonly consolidation: ConsolidationRepo
  readonly models: ModelRepo
  /** The outbox: deliveries are queued in the transaction of the change they report. */
  readonly webhooks: WebhookRepo
  /** Stored memories are debited in the transaction that stores them. */
  readonly ledger: LedgerRepo
  /** Deliveries were queued: the delivery loop has work. */
  readonly onDeliveriesQueued: Effect.Effect<void>
  /** The space's clock (SpaceClock): what its changes are stamped with. */
  readonly clock: Clock.Clock
  /** Facts were written, changed or removed: consolidation has work. */
  readonly onFactsChanged: Effect.Effect<void>
  /** New memories were recorded (written or consolidated): memory models may have a refresh due. */
  readonly onRecorded: Effect.Effect<void>
  /** The index's change lock: one change at a time (a snapshot holds it to read the whole index). */
  readonly lock: Effect.Semaphore
  /** The store version the index reflects, kept by each change. */
  readonly mark: IndexMark
  /** Waits for recalls in progress and takes a turn of its own before a change starts. */
  readonly beforeHeavyWrite: Effect.Effect<void>
  /** The vector of an edited text (outside the permit). */
  readonly embedOne: (text: string) => Effect.Effect<Vector, ServiceUnavailable>
}) =>
  Effect.gen(function*() {
    const { consolidation, embedOne, jobs, models, onFactsChanged, onRecorded, repo, space, spaces, state, webhooks } = deps
    const provenance = makeProvenance({ space, state, consolidation, models })
    const { lock, mark } = deps

    /** A transaction of a change: the store's version read before and after it, for the index's mark. */
    const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      repo.transaction(Effect.gen(function*() {
        mark.before(yield* repo.storeVersion(space))
        const result = yield* effect
        mark.after(yield* repo.storeVersion(space))
        return result
      }))
    // The space's changes are stamped on its clock, strictly increasing (every stamp is taken under the
    // permit): a memory recorded after a refresh read the space is always newer than that refresh.
    let lastStamp = 0
    const now = Effect.sync(() => {
      lastStamp = Math.max(deps.clock.unsafeCurrentTimeMillis(), lastStamp + 1)
      return new Date(lastStamp)
    })

    // Whether the space has webhooks, read at most every HOOKS_TTL ms: a space without any queues nothing and
    // pays nothing. A new webhook is seen within that time (the spec allows 15 s); edits and deletes apply at
    // once, since the outbox reads the webhooks in the change's own transaction.
    let hooksCheckedAt = Number.NEGATIVE_INFINITY
    let hasHooks = false
    const hooksMaybe = Effect.flatMap(wallClock.currentTimeMillis, (now) =>
      now - hooksCheckedAt < HOOKS_TTL
        ? Effect.succeed(hasHooks)
        : Effect.map(webhooks.any(space), (any) => {
          hasHooks = any
          hooksCheckedAt = now
          return any
        })
    )
    /** Queues `events` (inside the caller's transaction) when the space may have webhooks; answers how many. */
    const outbox = (events: () => ReadonlyArray<OutboxEvent>, at: Date) =>
      Effect.flatMap(hooksMaybe, (maybe) => (maybe ? webhooks.enqueue(space, events(), at) : Effect.succeed(0)))
    const afterOutbox = (queued: number) => (queued > 0 ? deps.onDeliveriesQueued : Effect.void)

    /** The debit for `count` stored memories, inside the caller's transaction. */
    const debitStored = (count: number, at: Date) =>
      count === 0 ? Effect.void : deps.ledger.recordInTransaction({
        orgId: space.orgId,
        opType: "memory_stored",
        spaceId: space.spaceId,
        quantity: count,
        credits: count * RATES.memory_stored,
        requestId: null,
        at
      })

    // When the last change finished (wall time): background work that can wait (deliveries) lets a stream of
    // writes go first.
    let lastChangeAt = 0
    /** Runs one change of the space alone; a defect fails only this change. */
    const exclusive = (operation: string) =>
    <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      lock.withPermits(1)(
        Effect.zipRight(deps.beforeHeavyWrite, effect).pipe(Effect.ensuring(Effect.map(wallClock.currentTimeMillis, (now) => void (lastChangeAt = now))))
      ).pipe(
        containDefects(operation, space),
        Effect.withSpan(`Space.${operation}`)
      )

    /**
     * A synchronous write: stored, then indexed; answers the stored memories.
     * One transaction: the memories, their place in the entity graph, and
     * what a replaced document's notes become.
     */
    const write = (prepared: DocumentWrites, events: ReadonlyArray<OutboxEvent> = []) =>
      Effect.gen(function*() {
        const at = yield* now
        const insert = repo.insertDocuments(space, [prepared], state.nextPosition, at)
        const replaces = provenance.touches(state.ofDocument(prepared.document.documentId))
        const hooks = yield* hooksMaybe
        // A transaction even for the plainest write: the entity graph is counted with the memories.
        const { queued, stored, unbuilt } = yield* transaction(Effect.gen(function*() {
          const stored = yield* insert
          yield* debitStored(stored.memories.length, at)
          const unbuilt = replaces ? yield* provenance.unbuild(stored.replaced, at) : nothingUnbuilt
          const queued = hooks ? yield* webhooks.enqueue(space, [memoryCreated(space, prepared.document, at), ...events], at) : 0
          return { stored, unbuilt, queued }
        }))
        state.apply(stored)
        provenance.apply(unbuilt)
        yield* afterOutbox(queued)
        return stored.memories
      }).pipe(exclusive("write"), Effect.tap(() => Effect.zipRight(onFactsChanged, onRecorded)))

    /**
     * A group of queued items, stored and settled in one transaction: an item
     * is marked done in the transaction that stores its memories, so exactly
     * once even across a crash or a second owner; items cancelled meanwhile
     * are not stored. An item whose preparation failed is marked failed.
     */
    const storeQueued = (
      items: ReadonlyArray<QueuedItem>,
      prepared: ReadonlyArray<PreparedItem>,
      /** Done in the same transaction (an uploaded file's bytes dropped once it is stored). */
      also: Effect.Effect<unknown, SqlError> = Effect.void,
      /** Queued with the memories (a rule's redaction of an uploaded file); dropped when nothing is stored. */
      events: ReadonlyArray<OutboxEvent> = []
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const outcomes = items.map((item, i): ItemOutcome =>
          Either.match(prepared[i]!, {
            onLeft: (error) => ({ _tag: "Failed", item, error }),
            onRight: (write) => ({ _tag: "Completed", item, memoryIds: write.memories.map((m) => m.id) })
          })
        )
        const stored = yield* transaction(Effect.gen(function*() {
          const settled = yield* jobs.settle(outcomes, at)
          const live = new Set(settled.map((row) => `${row.job_id}/${row.position}`))
          const writes = items.flatMap((item, i) => {
            const write = prepared[i]!
            return Either.isRight(write) && live.has(`${item.jobId}/${item.position}`) ? [write.right] : []
          })
          const stored = yield* repo.insertDocuments(space, writes, state.nextPosition, at)
          yield* debitStored(stored.memories.length, at)
          const queued = yield* outbox(() => [
            ...writes.map((write) => memoryCreated(space, write.document, at)),
            ...(writes.length > 0 ? events : [])
          ], at)
          yield* also
          return { stored, unbuilt: yield* provenance.unbuild(stored.replaced, at), queued }
        }))
        state.apply(stored.stored)
        provenance.apply(stored.unbuilt)
        yield* afterOutbox(stored.queued)
      }).pipe(
        exclusive("storeQueued"),
        Effect.tap(() => Effect.zipRight(onFactsChanged, onRecorded)),
        Effect.annotateSpans({ items: items.length })
      )

    /** Marks queued items failed, with nothing stored; `events` (why they were refused) are queued in the same transaction. */
    const failQueued = (
      items: ReadonlyArray<QueuedItem>,
      error: string,
      also: Effect.Effect<unknown, SqlError> = Effect.void,
      events: ReadonlyArray<OutboxEvent> = []
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const queued = yield* transaction(Effect.gen(function*() {
          yield* jobs.settle(items.map((item) => ({ _tag: "Failed", item, error })), at)
          yield* also
          return events.length > 0 ? yield* outbox(() => events, at) : 0
        }))
        yield* afterOutbox(queued)
      }).pipe(exclusive("failQueued"))

    /**
     * Deletes a document and its memories; the notes built on them follow
     * the provenance rule. Answers whether the document existed.
     */
    const deleteDocument = (documentId: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const { deleted, unbuilt } = yield* transaction(Effect.gen(function*() {
          const deleted = yield* repo.deleteDocument(space, documentId)
          const ids = Option.getOrElse(deleted, () => [])
          return { deleted, unbuilt: ids.length > 0 ? yield* provenance.unbuild(ids, at) : nothingUnbuilt }
        }))
        for (const id of Option.getOrElse(deleted, () => [])) state.remove(id)
        provenance.apply(unbuilt)
        if (unbuilt.removed.length > 0) yield* onFactsChanged
        return Option.isSome(deleted)
      }).pipe(exclusive("deleteDocument"))

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
          // A fact whose words or state change takes the notes built on it along; if active, it is consolidated anew.
          const reconsider = memory.type === "fact" && (next.text !== memory.text || next.state !== memory.state)
          const at = yield* now
          const result = yield* transaction(Effect.gen(function*() {
            const updated = yield* repo.update(memory, next, kind, at)
            if (Option.isNone(updated)) return { updated, unbuilt: nothingUnbuilt, queued: 0 }
            // Events handed over with the edit (a rule's redaction of it) are queued only when the edit is made.
            const queued = change.events.length > 0 ? yield* outbox(() => change.events, at) : 0
            if (!reconsider) return { updated, unbuilt: nothingUnbuilt, queued }
            const again = next.state === "active" ? [memory.id] : []
            return { updated, unbuilt: yield* provenance.unbuild([memory.id], at, again), queued }
          }))
          if (Option.isNone(result.updated)) return yield* missing(change.memoryId)
          state.put(result.updated.value)
          provenance.apply(result.unbuilt)
          yield* afterOutbox(result.queued)
          if (reconsider) yield* onFactsChanged
          return state.get(change.memoryId) ?? result.updated.value
        }).pipe(exclusive("edit"))
      })

    /** Deletes a memory, and what was built on it; answers whether it existed. */
    const forget = (id: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const { deleted, unbuilt } = yield* transaction(Effect.gen(function*() {
          const deleted = yield* repo.delete(space, id)
          return { deleted, unbuilt: deleted ? yield* provenance.unbuild([id], at) : nothingUnbuilt }
        }))
        if (deleted) state.remove(id)
        provenance.apply(unbuilt)
        if (unbuilt.removed.length > 0) yield* onFactsChanged
        return deleted
      }).pipe(exclusive("forget"))

    /**
     * A consolidation run's changes, in one transaction with the record of the
     * run. A plan made on memories that changed since (written, edited,
     * deleted meanwhile) is dropped, not applied: answers whether it was applied.
     */
    const applyConsolidation = (changes: Consolidated) =>
      Effect.gen(function*() {
        const stale = changes.basedOn.some((m) => state.meta(m.id)?.updatedAt.getTime() !== m.updatedAt.getTime())
        if (stale) return false
        const at = yield* now
        const written = yield* transaction(Effect.gen(function*() {
          const created = yield* consolidation.insert(space, changes.create, state.nextPosition, at)
          const updated = yield* consolidation.rewrite(space, changes.update, at)
          const removed = yield* consolidation.remove(space, changes.remove)
          const settled = yield* consolidation.settle(space, changes.considered, changes.superseded, at)
          const run = { created: created.length, updated: updated.length, deleted: removed.length, error: null }
          yield* consolidation.recordRun(space, { ...changes.run, ...run, facts: changes.considered.length }, at)
          const changedAny = run.created + run.updated + run.deleted > 0
          const queued = changedAny ? yield* outbox(() => [memoryConsolidated(space, run, at)], at) : 0
          return { changed: [...created, ...updated], settled, removed, queued }
        }))
        for (const { id } of written.removed) state.remove(id)
        for (const memory of written.changed) state.put(memory)
        for (const fact of written.settled) {
          const before = state.get(fact.id)
          if (before !== undefined) state.put({ ...before, consolidatedAt: fact.consolidatedAt, supersededBy: fact.supersededBy })
        }
        yield* afterOutbox(written.queued)
        return true
      }).pipe(exclusive("consolidate"), Effect.tap((applied) => (applied ? onRecorded : Effect.void)))

    /** A failed consolidation run: its record, and its `memory.consolidated` event, in one transaction. */
    const consolidationFailed = (run: RunRecord) =>
      Effect.gen(function*() {
        const at = yield* now
        const queued = yield* transaction(Effect.gen(function*() {
          yield* consolidation.recordRun(space, run, at)
          return yield* outbox(() => [memoryConsolidated(space, run, at)], at)
        }))
        yield* afterOutbox(queued)
      }).pipe(exclusive("consolidate.failed"))

    /**
     * The moment every change begun so far is in the index: a memory recorded
     * before it is seen by a recall made after it. A refresh reads from here.
     */
    const settledAt = now.pipe(exclusive("settledAt"))

    /**
     * A memory model's refresh, whole: its content and the settling of its job
     * item in one transaction. A model deleted meanwhile fails the item; a job
     * cancelled meanwhile writes nothing. Answers what happened.
     */
    /** A refresh's content, its job settled and what it is charged (`charges`), in one transaction. */
    const applyRefresh = (
      item: QueuedItem,
      modelId: string,
      content: string,
      query: string,
      refreshedAt: Date,
      charges: ReadonlyArray<LedgerEntry>
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        return yield* transaction(Effect.gen(function*() {
          const exists = yield* models.writeContent(space, modelId, content, query, refreshedAt, at)
          if (exists) for (const charge of charges) yield* deps.ledger.recordInTransaction(charge)
          const outcome: ItemOutcome = exists
            ? { _tag: "Completed", item, memoryIds: [] }
            : { _tag: "Failed", item, error: `memory model ${modelId} was deleted before its refresh finished` }
          const settled = yield* jobs.settle([outcome], at)
          if (settled.length === 0) return yield* Effect.fail(new RefreshCancelled())
          return exists ? "written" as const : "deleted" as const
        })).pipe(Effect.catchTag("RefreshCancelled", () => Effect.succeed("cancelled" as const)))
      }).pipe(exclusive("refreshModel.apply"))

    /** Deletes the space with everything in it; the index goes too. Answers whether it existed. */
    const deleteSpace = Effect.gen(function*() {
      const deleted = yield* transaction(spaces.delete(space))
      state.clear()
      return deleted
    }).pipe(exclusive("deleteSpace"))

    return {
      /** Milliseconds since the last change finished (wall time). */
      quietFor: Effect.map(wallClock.currentTimeMillis, (now) => now - lastChangeAt),
      /** A change made outside this module (an import of the whole space), run alone like every change here. */
      alone: <A, E, R>(effect: Effect.Effect<A, E, R>) => exclusive("import")(effect),
      write,
      storeQueued,
      failQueued,
      edit,
      forget,
      deleteDocument,
      applyConsolidation,
      consolidationFailed,
      settledAt,
      applyRefresh,
      deleteSpace
    }
  })

export type SpaceWriter = Effect.Effect.Success<ReturnType<typeof makeWriter>>
