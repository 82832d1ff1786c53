/**
 * The space's consolidation loop: a few seconds after writes settle (under a
 * steady stream, at the latest MAX_WAIT delays after the first; and on the
 * waker's sweep), the pending facts, oldest first, are planned into notes
 * (offline), the notes are written (offline or by a model, outside the
 * writer), summaries follow the notes, and the whole run is applied in one
 * transaction with its record. A failed run is recorded and retried by the
 * supervised loop; its facts stay pending, so nothing is lost to a crash.
 */
import { type Clock, Duration, Effect, Queue } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import type { EntityRef, IndexedMemory, Memory } from "../domain/Memory.ts"
import { type Consolidator, ConsolidationFailure } from "../consolidation/Consolidator.ts"
import { subjectOf } from "../consolidation/Facts.ts"
import { type GroupPlan, planGroupsInSlices, planSummaries, type SummaryPlan } from "../consolidation/Planner.ts"
import { noteWords, summaryText } from "../consolidation/Synthesis.ts"
import { words } from "../retrieval/Text.ts"
import { type EmbedderShape, vectorsToStore } from "../../services/embedder/Embedder.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import type { Synthesis } from "../../services/store/ConsolidationRepo.ts"
import { newMemoryId } from "../../services/store/MemoryRows.ts"
import type { MemoryMeta, SpaceState } from "./SpaceState.ts"
import type { SpaceWriter } from "./SpaceWriter.ts"
import type { LoopStep } from "./SupervisedLoop.ts"
import { makeSettling } from "./Settling.ts"
import { unavailable } from "./WritePreparation.ts"

/** Under a steady stream of writes, a run comes at the latest this many delays after the first of them. */
export const MAX_WAIT = 12

/** Pending facts planned per run: a run is one transaction, and recall must not wait long behind its planning. */
export const RUN_FACTS = 200

const newId = () => newMemoryId(randomBase62(20))

const uniqueEntities = (memories: ReadonlyArray<Memory>, limit = 24): ReadonlyArray<EntityRef> => {
  const seen = new Map<string, EntityRef>()
  for (const memory of memories) for (const entity of memory.entities) if (!seen.has(entity.name.toLowerCase())) seen.set(entity.name.toLowerCase(), entity)
  return [...seen.values()].slice(0, limit)
}

const span = (memories: ReadonlyArray<Memory>) => {
  const starts = memories.map((m) => (m.occurredStart ?? m.eventTime).getTime())
  const ends = memories.map((m) => (m.occurredEnd ?? m.occurredStart ?? m.eventTime).getTime())
  return {
    eventTime: new Date(Math.max(...memories.map((m) => m.eventTime.getTime()))),
    occurredStart: new Date(Math.min(...starts)),
    occurredEnd: new Date(Math.max(...ends))
  }
}

const noteOf = (group: GroupPlan, text: string): Omit<Synthesis, "embedding" | "embedder"> => {
  const sources = group.facts.map((f) => f.memory)
  return {
    id: group.id,
    type: group.kind,
    text,
    entities: uniqueEntities(sources),
    metadata: {
      ...(group.subject === null ? {} : { subject: group.subject }),
      ...(group.change === null ? {} : { attribute: group.change.attribute })
    },
    tags: [...new Set(sources.flatMap((m) => m.tags))],
    userId: sources[0]!.userId,
    agentId: sources[0]!.agentId,
    ...span(sources),
    sourceIds: sources.map((m) => m.id)
  }
}

/**
 * What a summary's topics read from the space's notes: who the notes are by
 * (a conversation names its other speaker everywhere, so names are left out)
 * and how telling each word is (the rarer among the notes, the more).
 */
const topicWeights = (notes: ReadonlyArray<{ readonly memory: Memory; readonly subject: string | null }>) => {
  const names = new Set(notes.flatMap((n) => (n.subject === null ? [] : words(n.subject))))
  const df = new Map<string, number>()
  for (const { memory } of notes) for (const word of new Set(noteWords(memory).map((w) => w.word))) df.set(word, (df.get(word) ?? 0) + 1)
  return { names, weightOf: (word: string) => Math.log(1 + notes.length / (df.get(word) ?? 1)) }
}

const summaryOf = (
  plan: SummaryPlan,
  topics: { readonly names: ReadonlySet<string>; readonly weightOf: (word: string) => number }
): Omit<Synthesis, "embedding" | "embedder"> => ({
  id: plan.id,
  type: "summary",
  text: summaryText(plan.about, plan.notes, topics.names, topics.weightOf),
  entities: uniqueEntities(plan.notes, 12),
  metadata: { summary_of: plan.key },
  tags: [],
  userId: plan.userId,
  agentId: plan.agentId,
  ...span(plan.notes),
  sourceIds: plan.notes.map((n) => n.id)
})

export const makeConsolidation = (deps: {
  readonly space: SpaceRef
  readonly state: SpaceState
  readonly writer: SpaceWriter
  readonly consolidator: Consolidator["Type"]
  readonly embedder: EmbedderShape
  /** How long writes must have settled before a run. */
  readonly delay: Duration.Duration
  /** The space's timers (debounces); the live clock, or a test's. */
  readonly clock: Clock.Clock
  readonly beforeHeavyWrite: Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const { clock, consolidator, embedder, state, writer } = deps
    const signal = yield* Queue.sliding<void>(1)
    const settling = yield* makeSettling({
      clock,
      delay: deps.delay,
      maxWait: MAX_WAIT,
      settled: Queue.offer(signal, undefined).pipe(Effect.asVoid)
    })

    /** Facts changed: consolidate once writes have settled for `delay`. */
    const nudge = settling.changed

    /**
     * Woken from outside (the waker saw facts pending): consolidate once the
     * last change this entity saw has settled. Not a change itself, so a
     * waker's rounds never hold a run back.
     */
    const woken = settling.settle

    const pendingFacts = () =>
      [...state.metas()]
        .filter((m) => m.type === "fact" && m.state === "active" && m.consolidatedAt === null)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.position - b.position)

    /**
     * The space's memories as this loop last read them, while it has work:
     * the planner keeps what it worked out per memory object (its terms, the
     * attributes it states), so an unchanged memory is the same object from
     * one run to the next. Let go when nothing is pending.
     */
    const known = new Map<string, IndexedMemory>()
    const unchanged = (held: IndexedMemory, now: MemoryMeta) =>
      held.updatedAt.getTime() === now.updatedAt.getTime() && held.state === now.state &&
      held.supersededBy === now.supersededBy && held.consolidatedAt?.getTime() === now.consolidatedAt?.getTime()
    const everything = () => {
      const out: Array<IndexedMemory> = []
      const seen = new Set<string>()
      for (const meta of state.metas()) {
        let memory = known.get(meta.id)
        if (memory === undefined || !unchanged(memory, meta)) {
          memory = state.get(meta.id)!
          known.set(meta.id, memory)
        }
        out.push(memory)
        seen.add(meta.id)
      }
      for (const id of known.keys()) if (!seen.has(id)) known.delete(id)
      return out
    }

    const embedAll = (texts: ReadonlyArray<string>) => vectorsToStore(embedder, texts).pipe(Effect.mapError(unavailable("embedding failed")))

    /** Runs a plan made in slices, letting waiting recalls and I/O go between them. */
    const inSlices = <A>(steps: Generator<void, A>) =>
      Effect.gen(function*() {
        for (;;) {
          const next = steps.next()
          if (next.done) return next.value
          yield* deps.beforeHeavyWrite
        }
      })

    const run = Effect.gen(function*() {
      const pending = pendingFacts()
      if (pending.length === 0) {
        known.clear()
        return { more: false, lagMs: 0 } satisfies LoopStep
      }
      const started = new Date(clock.unsafeCurrentTimeMillis())
      const batch = pending.slice(0, RUN_FACTS)
      yield* deps.beforeHeavyWrite
      const snapshot = everything()
      const planned = yield* inSlices(planGroupsInSlices(snapshot, batch.map((m) => m.id), newId))

      const notes = new Map<string, Omit<Synthesis, "embedding" | "embedder">>()
      for (const group of planned.groups) {
        notes.set(group.id, noteOf(group, yield* consolidator.write(group)))
        yield* deps.beforeHeavyWrite
      }

      // Summaries follow the notes as they will be after this run.
      const current = snapshot.filter((m) => m.type === "note" && m.state === "active" && !notes.has(m.id))
      const afterRun: Array<{ memory: Memory; subject: string | null }> = current.map((memory) => ({
        memory,
        subject: typeof memory.metadata["subject"] === "string" ? memory.metadata["subject"] : subjectOf(memory)
      }))
      for (const group of planned.groups) {
        if (group.kind !== "note") continue
        const note = notes.get(group.id)!
        const memory: Memory = {
          ...(group.existing ?? group.facts[0]!.memory),
          ...note,
          id: group.id,
          type: "note",
          state: "active",
          sourceIds: note.sourceIds,
          updatedAt: started
        }
        afterRun.push({ memory, subject: group.subject })
      }
      const summaries = planSummaries(afterRun, snapshot.filter((m) => m.type === "summary" && m.state === "active"), newId)
      const topics = summaries.write.length > 0 ? topicWeights(afterRun) : undefined
      const summaryNotes = new Map(summaries.write.map((plan) => [plan.id, summaryOf(plan, topics!)]))

      const written = [...notes.values(), ...summaryNotes.values()]
      const vectors = yield* embedAll(written.map((s) => s.text))
      const withVectors = written.map((s, i): Synthesis => ({
        ...s,
        embedding: vectors[i] ?? null,
        embedder: embedder.id
      }))
      const existing = new Map<string, Memory>([
        ...planned.groups.flatMap((g) => (g.existing ? [[g.id, g.existing] as const] : [])),
        ...summaries.write.flatMap((p) => (p.existing ? [[p.id, p.existing] as const] : []))
      ])
      const basedOn = [
        ...batch,
        ...planned.groups.flatMap((g) => g.facts.map((f) => f.memory)),
        ...existing.values(),
        ...summaries.write.flatMap((p) => p.notes.filter((n) => state.has(n.id) && !notes.has(n.id)))
      ]
      const applied = yield* writer.applyConsolidation({
        create: withVectors.filter((s) => !existing.has(s.id)),
        update: withVectors.flatMap((s) => {
          const before = existing.get(s.id)
          return before ? [{ before, after: s }] : []
        }),
        remove: summaries.remove,
        considered: planned.considered,
        superseded: planned.superseded,
        basedOn,
        run: { engine: consolidator.engine, startedAt: started }
      })
      yield* Effect.annotateCurrentSpan({
        engine: consolidator.engine,
        facts: batch.length,
        notes: notes.size,
        summaries: summaryNotes.size,
        applied
      })
      return {
        more: !applied || pending.length > batch.length,
        lagMs: clock.unsafeCurrentTimeMillis() - batch[0]!.createdAt.getTime()
      } satisfies LoopStep
    })

    /** One run; a failure is recorded as the run's outcome (and reported), then fails the step (the loop retries it). */
    const step = run.pipe(
      Effect.tapError((error) =>
        error instanceof ConsolidationFailure
          ? writer.consolidationFailed({
            engine: consolidator.engine,
            facts: Math.min(RUN_FACTS, pendingFacts().length),
            created: 0,
            updated: 0,
            deleted: 0,
            error: error.message,
            startedAt: new Date(clock.unsafeCurrentTimeMillis())
          }).pipe(Effect.ignore)
          : Effect.void
      )
    )

    return { nudge, woken, signal: Queue.take(signal), now: Queue.offer(signal, undefined).pipe(Effect.asVoid), step }
  })
