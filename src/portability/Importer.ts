/**
 * Running an import job: the uploaded file is read twice from the store.
 * First every line is decoded and screened by the space's rules (a malformed
 * or blocked line fails the job, naming the line), then, in one transaction
 * and as the space's one change at a time, the space is checked empty and
 * the documents, memories (ids, times, history and scopes as they were),
 * memory models and settings are stored. A memory keeps its vector when it
 * was made by this server's embedding model (and no rule changed its text);
 * otherwise the vector is computed here. Nothing is half-imported: any
 * failure rolls the whole transaction back.
 */
import { Clock, Data, Effect, Option } from "effect"
import type { Line, MemoryLine, SettingsLine } from "../domain/ExportFormat.ts"
import type { InternalError, ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import { RATES } from "../metering/Rates.ts"
import { defaultRules } from "../security/Rules.ts"
import { type CompiledRule, compile } from "../security/Screen.ts"
import { unavailable } from "../space/WritePreparation.ts"
import { policyTriggered } from "../webhooks/Events.ts"
import type { EmbedderShape } from "../../services/embedder/Embedder.ts"
import { yieldToIo } from "../../services/EventLoop.ts"
import type { ImportRepo } from "../../services/store/ImportRepo.ts"
import type { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import type { PortabilityJob, PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import type { RuleRepo } from "../../services/store/RuleRepo.ts"
import type { WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { type Checked, checkFile, keepsVector, lineOf } from "./ImportCheck.ts"
import { screenMemory, screenModel } from "./ImportScreen.ts"
import { forEachLine, ImportRejected } from "./Lines.ts"

/** Lines stored per statement. */
const PAGE = 500
/** Texts embedded per call, with a turn for pending I/O between calls. */
const EMBED_BATCH = 64

/** The job was cancelled while it ran: its transaction rolls back. */
class ImportCancelled extends Data.TaggedError("ImportCancelled") {}

export interface ImporterDeps {
  readonly space: SpaceRef
  readonly jobs: PortabilityRepo
  readonly store: ImportRepo
  readonly rules: RuleRepo
  readonly webhooks: WebhookRepo
  readonly ledger: LedgerRepo
  readonly embedder: EmbedderShape
  /** Runs the import's transaction as the space's one change at a time (its entity's writer), or as it is (the CLI). */
  readonly alone: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | InternalError, R>
  /** Once the import is stored: the space's index is rebuilt from the store (an entity; the CLI has none). */
  readonly afterCommit: Effect.Effect<void, ServiceUnavailable>
}

export const makeImporter = (deps: ImporterDeps) => {
  const { embedder, jobs, space, store } = deps
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

  const keeps = (line: MemoryLine, textChanged: boolean) => keepsVector(embedder, line, textChanged)
  const check = checkFile({ space, jobs, webhooks: deps.webhooks, embedder })

  /** The space's enabled rules (those a new space starts with, if it is gone: the import then fails on its check). */
  const loadRules = Effect.flatMap(deps.rules.enabledIfSpace(space), (stored) =>
    Effect.map(now, (at) => compile(Option.getOrElse(stored, () => defaultRules(at)))))

  /** Reads the file again, handing the lines of one kind to `flush` a page at a time. */
  const pass = <A extends Line, E, R>(
    job: PortabilityJob,
    pick: (line: Line) => A | undefined,
    flush: (page: ReadonlyArray<A>) => Effect.Effect<void, E, R>
  ) =>
    Effect.gen(function*() {
      let page: Array<A> = []
      yield* forEachLine((part) => jobs.readPart(job.jobId, part), (file) =>
        Effect.gen(function*() {
          const picked = pick(yield* lineOf(file))
          if (picked === undefined) return
          page.push(picked)
          if (page.length < PAGE) return
          const full = page
          page = []
          yield* flush(full)
        }))
      if (page.length > 0) yield* flush(page)
    })

  /** Vectors for the memories that need one, computed from their (screened) text. */
  const withVectors = (page: ReadonlyArray<{ readonly original: MemoryLine; readonly line: MemoryLine }>) =>
    Effect.gen(function*() {
      // An embedder that makes vectors from words needs none stored: the space's index makes them from the text.
      if (embedder.wordPart !== undefined) {
        return page.map(({ line }): MemoryLine => ({ ...line, embedding: null, embedding_model: embedder.id }))
      }
      const needed = page.filter((m) => !keeps(m.original, m.line.text !== m.original.text))
      const vectors = new Map<string, Float32Array>()
      for (let i = 0; i < needed.length; i += EMBED_BATCH) {
        const batch = needed.slice(i, i + EMBED_BATCH)
        const made = yield* embedder.embed(batch.map((m) => m.line.text)).pipe(Effect.mapError(unavailable("embedding failed")))
        batch.forEach((m, j) => {
          const vector = made[j]
          if (vector !== undefined) vectors.set(m.line.id, vector)
        })
        yield* yieldToIo
      }
      return page.map(({ line }): MemoryLine => {
        const vector = vectors.get(line.id)
        if (vector === undefined) return line
        return {
          ...line,
          embedding: Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64"),
          embedding_model: embedder.id
        }
      })
    })

  /** Second reading, in the caller's transaction: into an empty space, everything in the file. */
  const write = (job: PortabilityJob, rules: ReadonlyArray<CompiledRule>, checked: Checked) =>
    Effect.gen(function*() {
      const contents = yield* jobs.contents(space)
      if (contents.memories + contents.documents + contents.models > 0) {
        return yield* new ImportRejected({
          message: `the space is not empty (${contents.memories} memories, ${contents.documents} documents, ` +
            `${contents.models} memory models): an import restores into an empty space`
        })
      }
      const isDocument = (line: Line) => (line.kind === "document" ? line : undefined)
      const isMemory = (line: Line) => (line.kind === "memory" ? line : undefined)
      const isModel = (line: Line) => (line.kind === "memory_model" ? line : undefined)
      const isSettings = (line: Line): SettingsLine | undefined => (line.kind === "settings" ? line : undefined)
      yield* pass(job, isDocument, (page) => store.documents(space, page))
      yield* pass(job, isMemory, (page) =>
        Effect.flatMap(
          withVectors(page.map((original) => ({ original, line: screenMemory(rules, original).line }))),
          (lines) => store.memories(space, lines)
        ))
      yield* pass(job, isModel, (page) => store.models(space, page.map((line) => screenModel(rules, line).line)))
      yield* pass(job, isSettings, (page) => Effect.forEach(page, (line) => store.settings(space, line), { discard: true }))

      const at = yield* now
      const memories = yield* jobs.contents(space)
      if (memories.memories > 0) {
        yield* deps.ledger.recordInTransaction({
          orgId: space.orgId,
          opType: "memory_stored",
          spaceId: space.spaceId,
          quantity: memories.memories,
          credits: memories.memories * RATES.memory_stored,
          requestId: null,
          at
        })
      }
      if (checked.redactedLines > 0) {
        yield* deps.webhooks.enqueue(space, [policyTriggered(space, {
          action: "redact",
          detector: checked.detectors[0] ?? "regex",
          matchedTypes: checked.detectors,
          documentId: null,
          message: `redacted ${checked.detectors.join(", ")} in ${checked.redactedLines} lines of an import before they were stored`
        }, at)], at)
      }
      const completed = yield* jobs.complete(job.jobId, {
        stage: "completed",
        item_count: checked.lines,
        bytes: job.uploaded,
        completed_at: at.toISOString(),
        reembedded: checked.reembed,
        redacted: checked.redactedLines
      }, at)
      if (!completed) return yield* new ImportCancelled()
      yield* jobs.dropFile(job.jobId)
    }).pipe(Effect.withSpan("Import.write", { attributes: { lines: checked.lines } }))

  const failWith = (job: PortabilityJob, message: string) => Effect.flatMap(now, (at) => jobs.fail(job.jobId, message, at))

  /** Runs one import job to its end: completed, or failed with the reason. */
  const run = (job: PortabilityJob): Effect.Effect<void, ServiceUnavailable> =>
    Effect.gen(function*() {
      yield* jobs.progress(job.jobId, { stage: "validating", item_count: 0, bytes: job.uploaded, completed_at: null }, yield* now)
      const rules = yield* loadRules
      const checked = yield* check(job, rules)
      yield* jobs.progress(job.jobId, { stage: "importing", item_count: checked.lines, bytes: job.uploaded, completed_at: null }, yield* now)
      yield* deps.alone(Effect.gen(function*() {
        yield* jobs.transaction(write(job, rules, checked))
        yield* deps.afterCommit
      }))
      yield* Effect.annotateCurrentSpan({ lines: checked.lines, reembedded: checked.reembed })
    }).pipe(
      Effect.catchTags({
        ImportRejected: (rejected) => failWith(job, rejected.message),
        ImportCancelled: () => jobs.transaction(jobs.dropFile(job.jobId)),
        // The store refused a statement it should have taken (logged with its cause by `alone`): no retry helps.
        InternalError: () => failWith(job, "the store refused the import; the error was logged")
      }),
      Effect.withSpan("Import.run", { attributes: { org_id: space.orgId, space_id: space.spaceId, job_id: job.jobId } })
    )

  return { run }
}
