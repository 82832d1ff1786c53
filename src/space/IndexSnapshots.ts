/**
 * A space's index snapshot, from the entity's side: restoring the index from
 * it when the space wakes (only if it reads back whole and reflects the
 * store's current version of the space), and saving it after changes, in
 * the background once writes pause, and when the entity stops. The store
 * stays the source of truth: a snapshot that is missing, damaged, of another
 * embedder or behind the store is refused, and the caller rebuilds from the
 * store.
 */
import { Effect, Either, Metric, Option } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import { yieldToIo } from "../../services/EventLoop.ts"
import type { SnapshotStoreShape } from "../../services/store/SnapshotStore.ts"
import { BadBytes } from "./Binary.ts"
import { decodeBody, encodeBody, pack, unpack } from "./SnapshotCodec.ts"
import type { SpaceState } from "./SpaceState.ts"
import { OFF_THREAD_FROM, startWakeThread } from "../retrieval/WakeThread.ts"

export const snapshotsSaved = Metric.counter("engram_space_snapshots_saved", { description: "Index snapshots written" })
export const snapshotBytes = Metric.gauge("engram_space_snapshot_bytes", { description: "Size of the last index snapshot written" })

/**
 * The longest a slicing generator runs on before pending I/O gets a turn.
 * A neighbour's recall during a 100,000-memory wake waits for the slice in
 * progress: at 5 ms its p95 was 25-35 ms, at 12 ms 40-45 ms (alternated
 * runs of `bench:real`), and the wake alone no slower.
 */
export const SLICE_MS = 5

/**
 * Runs a slicing generator to its end, giving pending I/O a turn at the first
 * pause after every SLICE_MS of work: often enough that other spaces' recalls
 * wait little, seldom enough that a wake is not starved by them. A pause
 * that is a promise (work on another thread) is waited for.
 */
export const inSlices = <A>(steps: Generator<void | Promise<void>, A>) =>
  Effect.gen(function*() {
    let since = performance.now()
    for (;;) {
      const next = steps.next()
      if (next.done) return next.value
      const waiting = next.value
      if (waiting !== undefined) {
        yield* Effect.promise(() => waiting)
        since = performance.now()
      } else if (performance.now() - since >= SLICE_MS) {
        yield* yieldToIo
        since = performance.now()
      }
    }
  })

export const makeIndexSnapshots = (deps: {
  readonly space: SpaceRef
  readonly state: SpaceState
  readonly store: SnapshotStoreShape
  /** The store's current version of the space's memories. */
  readonly storeVersion: Effect.Effect<number, ServiceUnavailable>
  /** Runs an effect while no change to the space can start (the writer's permit). */
  readonly holdingChanges: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The store version the index reflects (the writer keeps it), undefined when the store changed behind its back. */
  readonly indexVersion: () => number | undefined
}) => {
  const { space, state, store } = deps
  const derived = state.embedder.wordPart !== undefined
  /** The state's change count the last snapshot written (or read) reflects; -1: none. */
  let savedAt = -1

  /**
   * Fills the (empty) state from the snapshot if it can be trusted; answers
   * how many memories it holds, or why it was refused (the state is then
   * left empty).
   */
  const restore: Effect.Effect<Either.Either<{ readonly memories: number; readonly storeVersion: number }, string>, ServiceUnavailable> = Effect.gen(function*() {
    const file = yield* store.read(space)
    if (Option.isNone(file)) return Either.left("no snapshot")
    // While the body inflates off the event loop, the embedder reads what it would read on first use.
    const [unpacked] = yield* Effect.all([Effect.either(unpack(file.value)), Effect.sync(() => state.embedder.load?.())], { concurrency: 2 })
    if (Either.isLeft(unpacked)) return Either.left(unpacked.left)
    const { body, header } = unpacked.right
    if (header.orgId !== space.orgId || header.spaceId !== space.spaceId) return Either.left("a snapshot of another space")
    if (header.embedder !== state.embedder.id || header.derived !== derived) {
      return Either.left(`a snapshot made with embedder ${header.embedder}`)
    }
    const version = yield* deps.storeVersion
    if (header.storeVersion !== version) return Either.left(`behind the store (snapshot at version ${header.storeVersion}, store at ${version})`)
    // A large space's postings and vectors are built on a thread of their own while the rest is read here.
    const read = yield* Effect.acquireUseRelease(
      Effect.sync(() => (header.memories >= OFF_THREAD_FROM ? startWakeThread() : undefined)),
      (thread) => inSlices(decodeBody(body, state, header, thread)),
      (thread) => Effect.sync(() => thread?.stop())
    ).pipe(
      Effect.either,
      Effect.catchAllDefect((defect) => Effect.succeed(Either.left(defect)))
    )
    const failure = state.index.wakeThreadFailure
    if (failure !== undefined) {
      yield* Effect.logWarning(`the wake thread failed (${failure}); the index was built on the main thread`).pipe(
        Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId })
      )
    }
    if (Either.isLeft(read)) {
      state.reset()
      const why = read.left
      return Either.left(why instanceof BadBytes ? `damaged: ${why.message}` : `unreadable: ${String(why)}`)
    }
    savedAt = state.changes
    replacedAt = state.replacements
    return Either.right({ memories: read.right, storeVersion: version })
  }).pipe(Effect.withSpan("Space.restoreSnapshot", { attributes: { org_id: space.orgId, space_id: space.spaceId } }))

  /** Whether the state has changed since the last snapshot. */
  const dirty = () => state.changes !== savedAt
  let replacedAt = state.replacements
  /** Whether a memory was removed or replaced since the last snapshot: the file may hold words that were erased. */
  const erased = () => state.replacements !== replacedAt

  /** Writes a snapshot of the state as it is now, unless nothing changed since the last. */
  const save = Effect.gen(function*() {
    const taken = yield* deps.holdingChanges(Effect.gen(function*() {
      if (!dirty()) return undefined
      const changes = state.changes
      const replacements = state.replacements
      const version = yield* deps.storeVersion
      // The index must be the store at this version: not if the store changed behind the writer's back.
      if (deps.indexVersion() !== version) {
        yield* Effect.logInfo("index snapshot skipped: the store changed outside this space's writer; the next wake rebuilds").pipe(
          Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId, store_version: version })
        )
        savedAt = changes
        return undefined
      }
      const encoded = yield* inSlices(encodeBody(state, derived))
      return { changes, replacements, version, encoded }
    }))
    if (taken === undefined) return false
    const bytes = yield* pack({
      orgId: space.orgId,
      spaceId: space.spaceId,
      storeVersion: taken.version,
      embedder: state.embedder.id,
      derived,
      memories: taken.encoded.memories
    }, taken.encoded.body)
    yield* store.write(space, bytes)
    savedAt = taken.changes
    replacedAt = taken.replacements
    yield* Metric.increment(snapshotsSaved)
    yield* Metric.set(snapshotBytes, bytes.length)
    yield* Effect.annotateCurrentSpan({ memories: taken.encoded.memories, bytes: bytes.length })
    return true
  }).pipe(Effect.withSpan("Space.saveSnapshot", { attributes: { org_id: space.orgId, space_id: space.spaceId } }))

  /** The space is gone: its snapshot goes, and nothing is saved for it until it changes again. */
  const forget = Effect.suspend(() => {
    savedAt = state.changes
    replacedAt = state.replacements
    return store.remove(space)
  })

  return { restore, save, dirty, erased, forget }
}

export type IndexSnapshots = ReturnType<typeof makeIndexSnapshots>
