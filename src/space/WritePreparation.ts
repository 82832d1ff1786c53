/**
 * Everything of a write that happens before its transaction: extraction,
 * embedding, and the document and memory rows they become. A queued group
 * is extracted item by item and embedded in one call; an item that fails
 * fails alone.
 */
import { Effect, Either } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import type { WriteItem } from "../domain/SpaceProtocol.ts"
import type { ExtractedMemory, ExtractorShape } from "../ingestion/Extractor.ts"
import type { EmbedderShape } from "../../services/embedder/Embedder.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import type { QueuedItem } from "../../services/store/JobRepo.ts"
import type { DocumentWrites, NewMemory } from "../../services/store/MemoryRepo.ts"

/** PGlite and extraction both hold the event loop: between items, pending I/O (other requests) gets a turn. */
export const yieldToIo = Effect.async<void>((resume) => {
  setImmediate(() => resume(Effect.void))
})

export const unavailable = (message: string) => (cause: unknown) =>
  new ServiceUnavailable({ message: `${message}: ${String((cause as Error)?.message ?? cause)}` })

export const makePreparation = (deps: {
  readonly extractor: ExtractorShape
  readonly embedder: EmbedderShape
  /** The space's next memory position (order of writing). */
  readonly position: () => number
}) => {
  const { embedder, extractor } = deps

  const extract = (item: WriteItem) =>
    extractor.extract({
      content: item.content,
      eventTime: new Date(item.eventTime),
      speaker: item.userId ?? undefined,
      fromAgent: item.agentId !== null && item.userId === null
    }).pipe(Effect.mapError(unavailable("extraction failed")))

  const embed = (texts: ReadonlyArray<string>) =>
    texts.length === 0
      ? Effect.succeed<ReadonlyArray<Float32Array>>([])
      : embedder.embed(texts).pipe(Effect.mapError(unavailable("embedding failed")))

  /** A write's document and memories, from its extracted facts and their vectors (same order). */
  const toWrite = (item: WriteItem, facts: ReadonlyArray<ExtractedMemory>, vectors: ReadonlyArray<Float32Array>) => {
    const eventTime = new Date(item.eventTime)
    const documentId = item.documentId ?? `doc_${randomBase62(16)}`
    const memories: Array<NewMemory> = facts.map((fact, i) => ({
      id: `mem_${randomBase62(20)}`,
      text: fact.text,
      sourceText: fact.sourceText,
      context: item.context,
      type: fact.type,
      entities: fact.entities,
      metadata: item.metadata as Record<string, unknown>,
      tags: item.tags,
      userId: item.userId,
      agentId: item.agentId,
      sessionId: item.sessionId,
      memberId: item.memberId,
      eventTime,
      occurredStart: fact.occurredStart,
      occurredEnd: fact.occurredEnd,
      position: deps.position(),
      embedding: vectors[i] ?? null,
      embedder: vectors[i] ? embedder.id : null
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

  /** Extraction and embedding: everything of a write that happens before the transaction. */
  const prepare = Effect.fn("Space.prepare")(function*(item: WriteItem) {
    const facts = yield* extract(item)
    const vectors = yield* embed(facts.map((f) => f.text))
    return toWrite(item, facts, vectors)
  })

  /**
   * Prepares a group of queued items: extraction one by one, embedding in
   * one call (one by one only if that fails). An item that fails fails alone.
   */
  const prepareGroup = Effect.fn("Space.prepareGroup")(function*(items: ReadonlyArray<QueuedItem>) {
    const requests = items.map((item) => item.request as WriteItem)
    const extracted: Array<Either.Either<ReadonlyArray<ExtractedMemory>, ServiceUnavailable>> = []
    for (const request of requests) {
      extracted.push(yield* Effect.either(extract(request)))
      // PGlite and extraction both hold the event loop: give pending I/O (other requests) a turn between items.
      yield* yieldToIo
    }
    const texts = extracted.flatMap((facts) => Either.isRight(facts) ? facts.right.map((f) => f.text) : [])
    const together = yield* Effect.either(embed(texts))
    let offset = 0
    const prepared: Array<Either.Either<DocumentWrites, ServiceUnavailable>> = []
    for (const [i, facts] of extracted.entries()) {
      if (Either.isLeft(facts)) {
        prepared.push(Either.left(facts.left))
        continue
      }
      const own = facts.right.map((f) => f.text)
      const vectors = Either.isRight(together)
        ? Either.right(together.right.slice(offset, offset + own.length))
        : yield* Effect.either(embed(own))
      offset += own.length
      prepared.push(Either.map(vectors, (vectors) => toWrite(requests[i]!, facts.right, vectors)))
    }
    return prepared
  })

  return { prepare, prepareGroup }
}
