/**
 * The Space entity: single writer of its space. On activation it loads the
 * space from PostgreSQL into its index and starts draining queued writes; it
 * passivates when idle, and Postgres stays the source of truth.
 */
import { Entity } from "@effect/cluster"
import { Clock, Effect, Either, Layer, Metric, Queue } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { NotFound } from "../domain/Errors.ts"
import type { MemoryItem } from "../domain/Memories.ts"
import { parseSpaceEntityId, SpaceEntity, type WriteItem } from "../domain/SpaceProtocol.ts"
import { Extractor } from "../ingestion/Extractor.ts"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { estimateTokens } from "../../services/llm/Provider.ts"
import { type ItemOutcome, JobRepo, type QueuedItem } from "../../services/store/JobRepo.ts"
import { MemoryRepo, type MemoryRow, toMemoryItem } from "../../services/store/MemoryRepo.ts"
import { iso, isoOrNull } from "../../services/store/SqlFailure.ts"
import { engineExclusions } from "./EngineStages.ts"
import { makePreparation, unavailable, yieldToIo } from "./WritePreparation.ts"
import { select } from "./Selection.ts"
import { SpaceState } from "./SpaceState.ts"

/** Operators (and tests) see spaces come and go: activations count up, the gauge follows the live ones. */
export const spaceActivations = Metric.counter("engram_space_activations", { description: "Space entities activated (index built from the store)" })
export const spacesActive = Metric.gauge("engram_spaces_active", { description: "Space entities currently holding their index in memory" })

/** Queued items stored per transaction: the statements per group stay constant, so a larger group amortises them. */
export const QUEUED_GROUP_SIZE = 50

const storedView = (row: MemoryRow) => ({
  memory_id: row.id,
  content: row.text,
  memory_type: row.type,
  entities: row.entities.map((e) => e.name),
  occurred_start: isoOrNull(row.occurred_start),
  occurred_end: isoOrNull(row.occurred_end),
  created_at: iso(row.created_at)
})

const makeSpace = Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const { orgId, spaceId } = parseSpaceEntityId(address.entityId)
  const repo = yield* MemoryRepo
  const jobs = yield* JobRepo
  const extractor = yield* Extractor
  const embedder = yield* Embedder
  yield* Effect.annotateCurrentSpan({ org_id: orgId, space_id: spaceId })

  const state = new SpaceState(embedder.id, embedder.wordVectors)
  const rows = yield* repo.loadSpace(orgId, spaceId).pipe(Effect.orDie)
  for (const row of rows) state.put(row)
  yield* Effect.logDebug("space activated").pipe(Effect.annotateLogs({ space_id: spaceId, memories: rows.length }))
  yield* Metric.increment(spaceActivations)
  yield* Metric.incrementBy(spacesActive, 1)
  yield* Effect.addFinalizer(() =>
    Metric.incrementBy(spacesActive, -1).pipe(
      Effect.zipRight(Effect.logDebug("space passivated").pipe(Effect.annotateLogs({ space_id: spaceId })))
    ))

  const { prepare, prepareGroup } = makePreparation({ extractor, embedder, position: () => state.position() })

  const apply = (stored: { rows: ReadonlyArray<MemoryRow>; replaced: ReadonlyArray<string> }) => {
    for (const id of stored.replaced) state.remove(id)
    for (const row of stored.rows) state.put(row)
  }

  const write = Effect.fn("Space.write")(function*(item: WriteItem) {
    const prepared = yield* prepare(item)
    const now = new Date(yield* Clock.currentTimeMillis)
    const stored = yield* repo.insertDocument(orgId, spaceId, prepared.document, prepared.memories, now)
    apply(stored)
    return { documentId: prepared.document.documentId, memories: stored.rows.map(storedView) }
  })

  /**
   * A group of queued items, stored and settled in one transaction: an item
   * is marked done in the transaction that stores its memories, so exactly
   * once even across a crash; items cancelled meanwhile are not stored.
   */
  const processGroup = Effect.fn("Space.processQueued")(function*(items: ReadonlyArray<QueuedItem>) {
    const prepared = yield* prepareGroup(items)
    const now = new Date(yield* Clock.currentTimeMillis)
    const outcomes = items.map((item, i): ItemOutcome =>
      Either.match(prepared[i]!, {
        onLeft: (error) => ({ _tag: "Failed", item, error: error.message }),
        onRight: (write) => ({ _tag: "Completed", item, memoryIds: write.memories.map((m) => m.id) })
      })
    )
    const stored = yield* repo.withTransaction(Effect.gen(function*() {
      const settled = yield* jobs.settleInTransaction(outcomes, now)
      const live = new Set(settled.map((row) => `${row.job_id}/${row.position}`))
      const writes = items.flatMap((item, i) => {
        const write = prepared[i]!
        return Either.isRight(write) && live.has(`${item.job_id}/${item.position}`) ? [write.right] : []
      })
      return yield* repo.insertDocumentsInTransaction(orgId, spaceId, writes, now)
    })).pipe(Effect.orDie)
    apply(stored)
  }, (effect, items) => Effect.annotateCurrentSpan({ items: items.length }).pipe(Effect.zipRight(effect)))

  const drainAll = Effect.gen(function*() {
    yield* Entity.keepAlive(true)
    while (true) {
      const group = yield* jobs.nextQueued(orgId, spaceId, QUEUED_GROUP_SIZE).pipe(Effect.orDie)
      if (group.length === 0) break
      yield* processGroup(group)
      yield* yieldToIo
    }
    yield* Entity.keepAlive(false)
  }).pipe(Effect.withSpan("Space.drain"))

  const wake = yield* Queue.sliding<void>(1)
  yield* Queue.take(wake).pipe(Effect.zipRight(drainAll), Effect.forever, Effect.forkScoped)
  yield* Queue.offer(wake, undefined)

  return SpaceEntity.of({
    Write: ({ payload }) => Effect.forEach(payload.items, write),

    Recall: ({ payload: recall }) =>
      Effect.gen(function*() {
        const vector = yield* embedder.embed([recall.query]).pipe(
          Effect.map((vs) => vs[0]),
          Effect.mapError(unavailable("embedding failed"))
        )
        const cap = Math.min(100, recall.limit + 50)
        const rank = (mode: "fast" | "accurate", limit: number) => state.rank(recall, vector, mode, limit)
        // A full receipt looks past the candidate cap, and in fast mode at what the accurate stages would rank.
        const hits = rank(recall.mode, recall.full ? cap + 50 : cap)
        const considered = hits.slice(0, cap)
        const selection = select(considered, state.rows, recall)
        const included = selection.included
        const excluded = recall.full
          ? engineExclusions({
            considered,
            beyondCap: hits.slice(cap),
            cap,
            limit: recall.limit,
            excluded: selection.excluded,
            accurateTop: recall.mode === "fast" ? rank("accurate", recall.limit).map((hit) => hit.id) : null,
            included: included.map((hit) => hit.id)
          })
          : selection.excluded
        const results = included.map((hit) => {
          const row = state.rows.get(hit.id)!
          return {
            memory_id: row.id,
            content: row.text,
            relevance_score: hit.score,
            memory_type: row.type,
            entities: row.entities.map((e) => e.name),
            occurred_start: isoOrNull(row.occurred_start ?? row.event_time),
            occurred_end: isoOrNull(row.occurred_end ?? row.occurred_start ?? row.event_time),
            metadata: row.metadata,
            created_at: iso(row.created_at)
          }
        })
        return { results, excluded, queryTokens: estimateTokens(recall.query) }
      }).pipe(Effect.withSpan("Space.recall", { attributes: { space_id: spaceId, memories: state.size } })),

    Edit: ({ payload }) =>
      Effect.gen(function*() {
        const row = state.rows.get(payload.memoryId)
        if (row === undefined) return yield* new NotFound({ message: `memory ${payload.memoryId} not found` })
        const next = {
          text: payload.text ?? row.text,
          context: payload.context ?? row.context,
          metadata: (payload.metadata ?? row.metadata) as Record<string, unknown>,
          tags: payload.tags ?? row.tags,
          state: payload.state ?? row.state
        }
        const kind = next.state !== row.state ? (next.state === "retired" ? "retired" : "restored") : "edited"
        const now = new Date(yield* Clock.currentTimeMillis)
        let updated = yield* repo.update(row, next, kind, now)
        if (updated.text !== row.text) {
          const [vector] = yield* embedder.embed([updated.text]).pipe(Effect.mapError(unavailable("embedding failed")))
          if (vector) {
            yield* repo.setEmbeddings(embedder.id, [[updated.id, vector]])
            updated = { ...updated, embedding: new Uint8Array(vector.buffer.slice(0)), embedder: embedder.id }
          }
        }
        state.put(updated)
        return toMemoryItem(updated) as MemoryItem
      }),

    Forget: ({ payload }) =>
      repo.delete(orgId, spaceId, payload.memoryId).pipe(Effect.tap((deleted) => deleted && state.remove(payload.memoryId))),

    Drain: () => Queue.offer(wake, undefined).pipe(Effect.asVoid),

    Reset: () =>
      Effect.sync(() => {
        for (const id of [...state.rows.keys()]) state.remove(id)
      })
  })
})

/** Registered with the idle time of the configuration (SPACE_IDLE_SECONDS, default five minutes). */
export const SpaceEntityLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => SpaceEntity.toLayer(makeSpace, { maxIdleTime: config.spaceIdleTime, concurrency: 1 }))
)
