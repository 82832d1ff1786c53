/**
 * The space's uploaded documents, parsed and stored one file at a time by its
 * entity (the `documents` loop). A file's bytes wait in the store until the
 * transaction that stores its memories also settles its job and drops them,
 * so an upload survives a crash and whichever node owns the space finishes
 * it. A file that cannot be read fails its own job with the parser's message;
 * a store or embedder that is down fails the step, which is retried.
 */
import { Cause, Clock, Effect, Either, Option, Queue } from "effect"
import type { InternalError, ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import { chunkDocument, type Chunk } from "../documents/Chunks.ts"
import type { Location, ParsedDocument } from "../documents/parsers/Shared.ts"
import type { ParseThreadShape } from "../documents/WorkerParser.ts"
import { extractEntities, opaqueIds } from "../ingestion/Entities.ts"
import type { ExtractorShape } from "../ingestion/Extractor.ts"
import { type EmbedderShape, vectorsToStore } from "../../services/embedder/Embedder.ts"
import { yieldToIo } from "../../services/EventLoop.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import type { DocumentRepo } from "../../services/store/DocumentRepo.ts"
import type { DocumentProgress, DocumentRequest, JobRepo, QueuedItem } from "../../services/store/JobRepo.ts"
import { type DocumentWrites, type NewMemory, newMemoryId } from "../../services/store/MemoryRows.ts"
import type { OutboxEvent } from "../../services/store/WebhookRepo.ts"
import type { SpaceWriter } from "./SpaceWriter.ts"
import type { LoopStep } from "./SupervisedLoop.ts"
import { unavailable } from "./WritePreparation.ts"
import type { Detector } from "../security/Detectors.ts"
import { withFlags } from "../security/Screen.ts"

/** Texts embedded per call, with a turn for pending I/O between calls. */
const EMBED_BATCH = 64
/** How often a running job's progress is written, in ms. */
const PROGRESS_EVERY = 1_000

/** Where a chunk came from, as a person would say it: "report.pdf, page 3". */
export const placeOf = (filename: string, location: Location) => {
  const parts = [filename]
  if (location.sheet !== undefined) parts.push(`sheet ${location.sheet}`)
  if (location.page !== undefined) parts.push(`page ${location.page}`)
  if (location.slide !== undefined) parts.push(`slide ${location.slide}`)
  if (location.row !== undefined) {
    parts.push(location.row_end !== undefined && location.row_end !== location.row ? `rows ${location.row}-${location.row_end}` : `row ${location.row}`)
  }
  if (location.heading_path !== undefined && location.heading_path.length > 0) parts.push(location.heading_path.join(" > "))
  return parts.join(", ")
}

const unitOf = (parsed: ParsedDocument) => parsed.units.kind

export const makeDocuments = (deps: {
  readonly space: SpaceRef
  readonly jobs: JobRepo
  readonly documents: DocumentRepo
  readonly writer: SpaceWriter
  /** The space's rules over the file's chunks, before anything of it is stored or embedded. */
  readonly screen: (
    space: SpaceRef,
    texts: ReadonlyArray<string>,
    documentId: string
  ) => Effect.Effect<{
    readonly texts: ReadonlyArray<string>
    readonly blocked: string | undefined
    /** What the rules did, queued with the file's outcome (its memories stored, or its job failed). */
    readonly events: ReadonlyArray<OutboxEvent>
    /** The detectors of the space's flag rules that a text matches. */
    readonly flags: (text: string) => ReadonlyArray<Detector>
  }, ServiceUnavailable>
  readonly extractor: ExtractorShape
  readonly embedder: EmbedderShape
  /** Where OCR keeps its working files. */
  readonly cachePath: string
  /** The node's parsing worker. */
  readonly parse: ParseThreadShape["parse"]
  readonly beforeHeavyWrite: Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const { documents, embedder, jobs, space, writer } = deps
    const wake = yield* Queue.sliding<void>(1)

    const fail = (item: QueuedItem, message: string, events: ReadonlyArray<OutboxEvent> = []) =>
      writer.failQueued([item], message, documents.dropFile(item.jobId), events).pipe(Effect.as({ more: true, lagMs: 0 }))

    const embed = (texts: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const vectors: Array<Float32Array | null> = []
        for (let i = 0; i < texts.length; i += EMBED_BATCH) {
          yield* deps.beforeHeavyWrite
          vectors.push(...yield* vectorsToStore(embedder, texts.slice(i, i + EMBED_BATCH)).pipe(Effect.mapError(unavailable("embedding failed"))))
          yield* yieldToIo
        }
        return vectors
      })

    /** The memories of a parsed file: one per chunk, or (strategy `facts`) the facts extracted from each chunk. */
    const memoriesOf = (request: DocumentRequest, parsed: ParsedDocument, chunks: ReadonlyArray<Chunk>) =>
      Effect.gen(function*() {
        const scopeIds = opaqueIds([request.userId, request.agentId, request.sessionId].filter((id): id is string => id !== null))
        const eventTime = new Date(request.eventTime)
        const drafts: Array<Omit<NewMemory, "embedding" | "embedder">> = []
        for (const [index, chunk] of chunks.entries()) {
          const metadata = { filename: request.filename, format: parsed.format, chunk: index, ...chunk.location }
          const common = {
            context: placeOf(request.filename, chunk.location),
            metadata,
            tags: request.tags,
            userId: request.userId,
            agentId: request.agentId,
            sessionId: request.sessionId,
            memberId: request.memberId,
            eventTime
          }
          if (request.strategy === "facts") {
            const facts = yield* deps.extractor.extract({ content: chunk.text, eventTime, scopeIds }).pipe(
              Effect.mapError(unavailable("extraction failed"))
            )
            for (const fact of facts) {
              drafts.push({
                ...common,
                id: newMemoryId(randomBase62(20)),
                text: fact.text,
                sourceText: fact.sourceText,
                type: fact.type,
                state: "active",
                entities: fact.entities,
                occurredStart: fact.occurredStart,
                occurredEnd: fact.occurredEnd
              })
            }
          } else {
            drafts.push({
              ...common,
              id: newMemoryId(randomBase62(20)),
              text: chunk.text,
              sourceText: chunk.text,
              type: "fact",
              state: "active",
              entities: extractEntities(chunk.text, null, scopeIds),
              occurredStart: null,
              occurredEnd: null
            })
          }
          if (index % 20 === 19) yield* yieldToIo
        }
        return drafts
      })

    const step: Effect.Effect<LoopStep, ServiceUnavailable | InternalError> = Effect.gen(function*() {
      const next = yield* jobs.nextDocument(space)
      const queued = next[0]
      if (queued === undefined) return { more: false, lagMs: 0 }
      const { item } = queued
      const lagMs = (yield* Clock.currentTimeMillis) - item.queuedAt.getTime()
      if (Either.isLeft(queued.request)) return yield* fail(item, queued.request.left)
      const request = queued.request.right
      const bytes = yield* documents.read(item.jobId, request.size)
      if (Option.isNone(bytes)) return yield* fail(item, `the bytes of ${request.filename} are missing from the store`)

      // Progress is noted by the parser as it goes and written at most every PROGRESS_EVERY ms.
      let progress: DocumentProgress = { stage: "parsing", format: null, unit: null, done: 0, total: null }
      const writeProgress = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        jobs.progress(item.jobId, item.position, progress, new Date(now)))
      yield* writeProgress
      const parsed = yield* Effect.scoped(Effect.gen(function*() {
        yield* writeProgress.pipe(
          Effect.delay(PROGRESS_EVERY),
          Effect.forever,
          Effect.catchAllCause(() => Effect.void),
          Effect.forkScoped
        )
        return yield* deps.parse(bytes.value, request.filename, request.contentType ?? undefined, {
          cachePath: deps.cachePath,
          onProgress: (done, total) => {
            progress = { stage: "parsing", format: null, unit: null, done, total }
          }
        }).pipe(
          Effect.either,
          // A bug in a parser fails this file's job, not the space: the defect is logged with the file's name.
          Effect.catchAllDefect((defect) =>
            Effect.logError(`parsing ${request.filename} failed`, Cause.die(defect)).pipe(
              Effect.as(Either.left({ message: "the parser failed on this file; the error was logged" }))
            ))
        )
      }))
      if (Either.isLeft(parsed)) return yield* fail(item, `${request.filename}: ${parsed.left.message}`)
      const document = parsed.right

      const parts = chunkDocument(document, request.strategy === "pages" ? "pages" : "chunks")
      // The file's name, its sheets' names and its headings are stored too (metadata, context): they pass the rules with the text.
      const labels = parts.map((chunk) => [chunk.location.sheet ?? "", ...(chunk.location.heading_path ?? [])])
      const screened = yield* deps.screen(space, [request.filename, ...parts.map((chunk) => chunk.text), ...labels.flat()], request.documentId)
      if (screened.blocked !== undefined) return yield* fail(item, `${request.filename}: ${screened.blocked}`, screened.events)
      let at = 1 + parts.length
      const chunks = parts.map((chunk, i) => {
        const [sheet = "", ...headings] = screened.texts.slice(at, at + labels[i]!.length)
        at += labels[i]!.length
        const location = {
          ...chunk.location,
          ...(chunk.location.sheet === undefined ? {} : { sheet }),
          ...(chunk.location.heading_path === undefined ? {} : { heading_path: headings })
        }
        return { ...chunk, text: screened.texts[1 + i] ?? "", location }
      })
      const filename = screened.texts[0] ?? request.filename
      const drafts = yield* memoriesOf({ ...request, filename }, document, chunks)
      if (drafts.length === 0) return yield* fail(item, `${request.filename}: no text was found in the file`)
      const storing: DocumentProgress = {
        stage: "storing",
        format: document.format,
        unit: unitOf(document),
        done: document.units.count,
        total: document.units.count
      }
      progress = storing
      yield* writeProgress
      const vectors = yield* embed(drafts.map((d) => d.text))
      const writes: DocumentWrites = {
        document: {
          documentId: request.documentId,
          source: "file",
          textLength: document.textLength,
          tags: request.tags,
          filename
        },
        memories: drafts.map((draft, i) => ({
          ...draft,
          metadata: withFlags(draft.metadata, screened.flags(draft.text)),
          embedding: vectors[i] ?? null,
          embedder: embedder.id
        }))
      }
      yield* writer.storeQueued([item], [Either.right(writes)], documents.dropFile(item.jobId), screened.events)
      yield* Effect.annotateCurrentSpan({ format: document.format, memories: writes.memories.length, units: document.units.count })
      return { more: true, lagMs }
    }).pipe(Effect.annotateSpans({ space_id: space.spaceId }))

    return { step, signal: Queue.take(wake), nudge: Queue.offer(wake, undefined).pipe(Effect.asVoid) }
  })
