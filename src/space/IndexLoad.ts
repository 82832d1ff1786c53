/**
 * Building a space's index from the store: its memories read a page at a
 * time, each page indexed in slices, with a turn for pending I/O between
 * them, so a large space waking never holds the node's event loop for long
 * (other spaces keep answering meanwhile).
 */
import { Effect } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import { yieldToIo } from "../../services/EventLoop.ts"
import type { MemoryRepo, PageCursor } from "../../services/store/MemoryRepo.ts"

type TextRow = Effect.Effect.Success<ReturnType<MemoryRepo["textPage"]>>["texts"][number]
import type { IndexedMemory } from "../domain/Memory.ts"
import type { SpaceState } from "./SpaceState.ts"

/** Memories read from the store per statement. */
const PAGE = 2000
/** Memories indexed between two turns for pending I/O. */
const SLICE = 500

/** Reads every memory of the space into `state` (empty before); answers how many. */
export const loadFromStore = (repo: MemoryRepo, space: SpaceRef, state: SpaceState) =>
  Effect.gen(function*() {
    let after: PageCursor | null = null
    let count = 0
    for (;;) {
      const page: { readonly memories: ReadonlyArray<IndexedMemory>; readonly next: PageCursor | null } = yield* repo.loadPage(space, after, PAGE)
      for (let i = 0; i < page.memories.length; i++) {
        state.put(page.memories[i]!)
        if ((i + 1) % SLICE === 0) yield* yieldToIo
      }
      count += page.memories.length
      if (page.memories.length < PAGE || page.next === null) return count
      after = page.next
      yield* yieldToIo
    }
  }).pipe(Effect.withSpan("Space.loadFromStore", { attributes: { org_id: space.orgId, space_id: space.spaceId } }))

/** Texts read per statement when a space woken from a snapshot reads them. */
const TEXT_PAGE = 1000

/**
 * Reads the texts of every memory `state` holds without them (woken from a
 * snapshot), a page at a time, letting `pause` run before each page (recalls
 * waiting go first); answers how many it read.
 */
export const fillTexts = (repo: MemoryRepo, space: SpaceRef, state: SpaceState, pause: Effect.Effect<void>) =>
  Effect.gen(function*() {
    let after: PageCursor | null = null
    let filled = 0
    while (!state.complete) {
      // Before every page, the first too: the recall that woke the space answers first.
      yield* pause
      const page: { readonly texts: ReadonlyArray<TextRow>; readonly next: PageCursor | null } = yield* repo.textPage(space, after, TEXT_PAGE)
      for (const row of page.texts) {
        // The source stays as the store keeps it: the edits that make it from the text, made on demand.
        const texts = { text: row.text, sourceText: row.source_diff === null ? row.source_text : "", context: row.context, metadata: row.metadata }
        state.fillText(row.id, texts, row.source_diff)
      }
      filled += page.texts.length
      if (page.texts.length < TEXT_PAGE || page.next === null) break
      after = page.next
    }
    // A memory the store no longer has (changed behind the writer's back) leaves the index too.
    const gone = state.missingTexts()
    if (gone.length > 0) {
      yield* Effect.logWarning(`${gone.length} memories of the snapshot are not in the store; they leave the index`).pipe(
        Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId })
      )
      for (const id of gone) state.remove(id)
    }
    return filled
  }).pipe(Effect.withSpan("Space.fillTexts", { attributes: { org_id: space.orgId, space_id: space.spaceId } }))
