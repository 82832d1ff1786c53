/**
 * Everything of a write that happens before its transaction, outside the
 * space's writer: extraction, embedding, and the document and memory records
 * they become. A queued group is extracted item by item and embedded in one
 * call; an item that fails fails alone. The space's extraction settings are
 * read from the store for each call and each group, so a change made through
 * any node applies to the next write.
 */
import { Effect, Either } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import type { WriteItem } from "../domain/SpaceProtocol.ts"
import type { ExtractionSettingsValues } from "../domain/ExtractionSettings.ts"
import { type ExtractedMemory, type ExtractorShape, localExtract } from "../ingestion/Extractor.ts"
import { extractWith } from "../ingestion/ExtractionSettings.ts"
import type { ExtractionThreadShape } from "../ingestion/WorkerExtraction.ts"
import { type EmbedderShape, vectorsToStore } from "../../services/embedder/Embedder.ts"
import { onlyAsks } from "../retrieval/Text.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import type { QueuedItem } from "../../services/store/JobRepo.ts"
import { type DocumentWrites, type NewMemory, newMemoryId } from "../../services/store/MemoryRows.ts"


const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

export const unavailable = (message: string) => (cause: unknown) =>
  new ServiceUnavailable({ message: `${message}: ${describe(cause)}` })

/** A prepared queued item: its document and memories, or why it cannot be stored. */
export type PreparedItem = Either.Either<DocumentWrites, string>

export const makePreparation = (deps: {
  readonly extractor: ExtractorShape
  /** The space's extraction settings as stored now. */
  readonly settings: Effect.Effect<ExtractionSettingsValues, ServiceUnavailable>
  readonly embedder: EmbedderShape
  /** One extraction on this thread at a time per space, each started after recalls in progress, in a turn of its own. */
  readonly extracting: Effect.Semaphore
  readonly beforeHeavyWrite: Effect.Effect<void>
  /** The node's extraction worker, for the local engine's queued groups. */
  readonly thread: ExtractionThreadShape
}) => {
  const { beforeHeavyWrite, embedder, extracting, extractor, thread } = deps

  /** What the extractor reads of a write: its text, time, speaker and scopes. */
  const inputOf = (item: WriteItem) => ({
    content: item.content,
    eventTime: new Date(item.eventTime),
    speaker: item.userId ?? undefined,
    fromAgent: item.agentId !== null && item.userId === null,
    scopeIds: [item.userId, item.agentId, item.sessionId].filter((id): id is string => id !== null)
  })

  const extract = (item: WriteItem, settings: ExtractionSettingsValues) =>
    extractWith(extractor, settings, inputOf(item)).pipe(
      Effect.mapError(unavailable("extraction failed")),
      // Never inside the microtasks Node runs after each incoming request, nor while a recall is being answered.
      (extraction) => Effect.zipRight(beforeHeavyWrite, extraction),
      extracting.withPermits(1)
    )

  /**
   * The local engine, exactly as provided (not wrapped), extracts a queued
   * group on the node's extraction worker, so its CPU is the second core's
   * while this thread stores the group before; a model extractor (or a
   * wrapped one) extracts here, item by item. A group goes to the worker as
   * soon as the drain asks (the worker takes groups one at a time, in the
   * order sent), not once this thread has taken the worker's answer to the
   * group before, which it does only between the statements of a store: the
   * worker goes from one group to the next without waiting on this thread.
   * `extracting` orders only the extractions made on this thread.
   */
  const offThread = extractor.extract === localExtract

  const extractGroup = (
    writes: ReadonlyArray<WriteItem>,
    settings: ExtractionSettingsValues
  ): Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<ExtractedMemory>, string>>, ServiceUnavailable> =>
    offThread && writes.length > 0
      ? thread.extract(writes.map((item) => {
        const { speaker, ...input } = inputOf(item)
        return { ...input, speaker: speaker ?? null, guidance: settings.guidance, verbatim: settings.mode === "verbatim" }
      })).pipe(
        Effect.filterOrFail(
          (outcomes) => outcomes.length === writes.length,
          (outcomes) => new ServiceUnavailable({ message: `the extraction worker answered ${outcomes.length} writes for ${writes.length}` })
        ),
        Effect.map((outcomes) => outcomes.map((o) => (o.ok ? Either.right(o.memories) : Either.left(`extraction failed: ${o.message}`))))
      )
      : Effect.forEach(writes, (write) => Effect.either(extract(write, settings)).pipe(Effect.map(Either.mapLeft((e) => e.message))))

  const embed = (texts: ReadonlyArray<string>) => vectorsToStore(embedder, texts).pipe(Effect.mapError(unavailable("embedding failed")))

  /** One text's vector to store, for an edit (none from an embedder that makes vectors from words). */
  const embedOne = (text: string) => Effect.map(embed([text]), (vectors) => ({ vector: vectors[0] ?? null, embedder: embedder.id }))

  /** A write's document and memories, from its extracted facts and their vectors (same order). */
  const toWrite = (item: WriteItem, facts: ReadonlyArray<ExtractedMemory>, vectors: ReadonlyArray<Float32Array | null>): DocumentWrites => {
    const eventTime = new Date(item.eventTime)
    const documentId = item.documentId ?? `doc_${randomBase62(16)}`
    const memories: Array<NewMemory> = facts.map((fact, i) => ({
      id: newMemoryId(randomBase62(20)),
      text: fact.text,
      sourceText: fact.sourceText,
      context: item.context,
      type: fact.type,
      // A turn that only asks states nothing: kept and listed, never recalled beside the facts that answer it.
      state: fact.type === "fact" && onlyAsks(fact.text) ? "question" : "active",
      entities: fact.entities,
      metadata: item.metadata,
      tags: item.tags,
      userId: item.userId,
      agentId: item.agentId,
      sessionId: item.sessionId,
      memberId: item.memberId,
      eventTime,
      occurredStart: fact.occurredStart,
      occurredEnd: fact.occurredEnd,
      embedding: vectors[i] ?? null,
      embedder: embedder.id
    }))
    return {
      document: {
        documentId,
        source: item.documentId === null ? "memory" as const : "custom" as const,
        textLength: item.content.length,
        tags: item.tags
      },
      memories
    }
  }

  /** Extraction and embedding of one write, under the settings read for its call. */
  const prepare = Effect.fn("Space.prepare")(function*(item: WriteItem, settings: ExtractionSettingsValues) {
    const facts = yield* extract(item, settings)
    const vectors = yield* embed(facts.map((f) => f.text))
    return toWrite(item, facts, vectors)
  })

  /**
   * Prepares a group of queued items under the settings read for it:
   * extraction (the local engine's on its worker, in one message), embedding
   * in one call (one by one only if that fails). An item that fails fails
   * alone; a payload that could not be read fails its item.
   */
  const prepareGroupWith = Effect.fn("Space.prepareGroup")(function*(items: ReadonlyArray<QueuedItem>, settings: ExtractionSettingsValues) {
    const writes = items.flatMap((item) => (Either.isRight(item.write) ? [item.write.right] : []))
    const results = yield* extractGroup(writes, settings)
    let next = 0
    const extracted: Array<Either.Either<{ write: WriteItem; facts: ReadonlyArray<ExtractedMemory> }, string>> = []
    for (const item of items) {
      if (Either.isLeft(item.write)) {
        extracted.push(Either.left(item.write.left))
        continue
      }
      const write = item.write.right
      const facts = results[next++]!
      extracted.push(Either.map(facts, (facts) => ({ write, facts })))
    }
    const texts = extracted.flatMap((e) => Either.isRight(e) ? e.right.facts.map((f) => f.text) : [])
    const together = yield* Effect.either(embed(texts))
    let offset = 0
    const prepared: Array<PreparedItem> = []
    for (const entry of extracted) {
      if (Either.isLeft(entry)) {
        prepared.push(Either.left(entry.left))
        continue
      }
      const { facts, write } = entry.right
      const own = facts.map((f) => f.text)
      const vectors = Either.isRight(together)
        ? Either.right(together.right.slice(offset, offset + own.length))
        : yield* Effect.either(embed(own))
      offset += own.length
      prepared.push(Either.match(vectors, {
        onLeft: (error) => Either.left(error.message),
        onRight: (vectors) => Either.right(toWrite(write, facts, vectors))
      }))
    }
    return prepared
  })

  return { settings: deps.settings, prepare, prepareGroupWith, embedOne }
}
