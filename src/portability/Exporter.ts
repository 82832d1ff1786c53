/**
 * Writing a space's export file: its lines as a stream, each kind read from
 * the store a page at a time (never more than a page of rows in memory),
 * and the export job that stores them in parts for download. The lines are
 * read as the pages come: a write made while an export runs may or may not
 * be in it (docs/api.md).
 */
import { Chunk, Clock, Effect, Option, Schema, Stream } from "effect"
import {
  type Counts,
  DocumentLine,
  EndLine,
  FORMAT,
  FORMAT_VERSION,
  Header,
  MemoryLine,
  ModelLine,
  SettingsLine,
  UserProfileLine
} from "../domain/ExportFormat.ts"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import type { EmbedderShape } from "../../services/embedder/Embedder.ts"
import type { ExportRepo, MemoryCursor } from "../../services/store/ExportRepo.ts"
import { unavailable } from "../space/WritePreparation.ts"
import { FILE_PART_BYTES, type PortabilityJob, type PortabilityRepo } from "../../services/store/PortabilityRepo.ts"

/** Memories per page (each with its history and vector). */
const MEMORY_PAGE = 500
/** Documents, models and user profiles per page. */
const PAGE = 1000
/** A space keeps this many finished exports; an older one goes (with its file) when a newer one finishes. */
export const KEPT_EXPORTS = 5

const ndjson = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeSync(schema)
  return (value: A) => `${JSON.stringify(encode(value))}\n`
}
const headerLine = ndjson(Header)
const memoryLine = ndjson(MemoryLine)
const documentLine = ndjson(DocumentLine)
const modelLine = ndjson(ModelLine)
const profileLine = ndjson(UserProfileLine)
const settingsLine = ndjson(SettingsLine)
const endLine = ndjson(EndLine)

/** Every page after a cursor, until a page comes back short. */
const keyset = <A, C>(page: (after: C | null) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly next: C | null }, ServiceUnavailable>, limit: number) =>
  Stream.paginateChunkEffect<C | null, A, ServiceUnavailable, never>(null, (after) =>
    Effect.map(page(after), ({ items, next }) => [
      Chunk.fromIterable(items),
      items.length < limit || next === null ? Option.none<C | null>() : Option.some<C | null>(next)
    ]))

const byKey = <A>(load: (after: string | null, limit: number) => Effect.Effect<ReadonlyArray<A>, ServiceUnavailable>, key: (a: A) => string) =>
  keyset<A, string>((after) =>
    Effect.map(load(after, PAGE), (items) => ({ items, next: items.length === 0 ? null : key(items[items.length - 1]!) })), PAGE)

/**
 * A memory stored without its vector because its embedder makes vectors from
 * words (the index makes them again) gets the vector in the file all the
 * same: a file carries every vector its embedder made, as it always has.
 */
const withVector = (embedder: EmbedderShape) => (line: MemoryLine): Effect.Effect<MemoryLine, ServiceUnavailable> =>
  line.embedding !== null || line.embedding_model !== embedder.id || embedder.wordPart === undefined
    ? Effect.succeed(line)
    : embedder.embed([line.text]).pipe(
      Effect.map(([vector]) =>
        vector === undefined ? line : { ...line, embedding: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64") }
      ),
      Effect.mapError(unavailable("embedding failed"))
    )

/** The export file of a space as NDJSON lines (each ending in a newline): header, records, end line. */
export const exportLines = (repo: ExportRepo, space: SpaceRef, embedder: EmbedderShape): Stream.Stream<string, ServiceUnavailable> =>
  Stream.suspend(() => {
    const embeddingModel = embedder.id
    const counts = { memories: 0, documents: 0, memory_models: 0, user_profiles: 0, settings: 0 }
    const counted = <A>(kind: keyof Counts, render: (a: A) => string) => (a: A) => {
      counts[kind]++
      return render(a)
    }
    const header = Stream.fromEffect(Effect.map(Clock.currentTimeMillis, (now) =>
      headerLine({
        kind: "header",
        format: FORMAT,
        version: FORMAT_VERSION,
        space_id: space.spaceId,
        exported_at: new Date(now),
        embedding_model: embeddingModel
      })))
    const memories = keyset<MemoryLine, MemoryCursor>(
      (after) => Effect.map(repo.memories(space, after, MEMORY_PAGE), ({ lines, next }) => ({ items: lines, next })),
      MEMORY_PAGE
    ).pipe(Stream.mapEffect(withVector(embedder)), Stream.map(counted("memories", memoryLine)))
    const documents = byKey((after, limit) => repo.documents(space, after, limit), (d) => d.document_id)
      .pipe(Stream.map(counted("documents", documentLine)))
    const models = byKey((after, limit) => repo.models(space, after, limit), (m) => m.model_id)
      .pipe(Stream.map(counted("memory_models", modelLine)))
    const profiles = byKey((after, limit) => repo.userProfiles(space, after, limit), (p) => p.user_id)
      .pipe(Stream.map(counted("user_profiles", profileLine)))
    const settings = Stream.fromIterableEffect(repo.settings(space)).pipe(Stream.map(counted("settings", settingsLine)))
    const end = Stream.sync(() => endLine({ kind: "end", counts: { ...counts } }))
    return Stream.concatAll(Chunk.make(header, memories, documents, models, profiles, settings, end))
  })

/**
 * Runs one export job: its file written to the store in parts as the lines
 * come, then the job completed with its counts. A job retried after a crash
 * starts its file over.
 */
export const runExport = (deps: {
  readonly space: SpaceRef
  readonly jobs: PortabilityRepo
  readonly exports: ExportRepo
  readonly embedder: EmbedderShape
}) =>
(job: PortabilityJob): Effect.Effect<void, ServiceUnavailable> =>
  Effect.gen(function*() {
    const { jobs, space } = deps
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
    yield* jobs.progress(job.jobId, { stage: "exporting", item_count: 0, bytes: 0, completed_at: null }, yield* now)
    yield* jobs.transaction(jobs.dropFile(job.jobId))
    let part = 0
    let bytes = 0
    let lines = 0
    let buffered: Array<Buffer> = []
    let size = 0
    const flush = Effect.suspend(() => {
      if (size === 0) return Effect.void
      const data = Buffer.concat(buffered, size)
      buffered = []
      size = 0
      return jobs.transaction(jobs.putPart(job.jobId, part++, data))
    })
    yield* Stream.runForEach(exportLines(deps.exports, space, deps.embedder), (line) =>
      Effect.suspend(() => {
        const data = Buffer.from(line, "utf8")
        buffered.push(data)
        size += data.length
        bytes += data.length
        lines++
        return size >= FILE_PART_BYTES ? flush : Effect.void
      }))
    yield* flush
    const at = yield* now
    const completed = yield* jobs.transaction(Effect.gen(function*() {
      // The header and end lines are the file's frame, not its items.
      const done = yield* jobs.complete(job.jobId, { stage: "completed", item_count: lines - 2, bytes, completed_at: at.toISOString() }, at)
      if (done) yield* jobs.pruneExports(space, KEPT_EXPORTS)
      else yield* jobs.dropFile(job.jobId)
      return done
    }))
    yield* Effect.annotateCurrentSpan({ lines, bytes, completed })
  }).pipe(Effect.withSpan("Export.run", { attributes: { org_id: deps.space.orgId, space_id: deps.space.spaceId, job_id: job.jobId } }))
