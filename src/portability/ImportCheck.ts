/**
 * The first reading of an import: every line of the file decodes with its
 * kind's schema, the file starts with its header and ends with its end line
 * (whose counts agree), each id appears once, each memory's document is in
 * the file, and no rule of the space blocks a line. Nothing is stored; the
 * first problem fails the job, naming the line (a block also fires its
 * `security.policy_triggered` event).
 */
import { Clock, Effect, Either } from "effect"
import type { Counts, Line, MemoryLine } from "../domain/ExportFormat.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import type { Rule } from "../domain/Rules.ts"
import type { Detector } from "../security/Detectors.ts"
import type { CompiledRule } from "../security/Screen.ts"
import { policyTriggered } from "../webhooks/Events.ts"
import type { EmbedderShape } from "../../services/embedder/Embedder.ts"
import type { PortabilityJob, PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import type { WebhookRepo } from "../../services/store/WebhookRepo.ts"
import { screenMemory, screenModel } from "./ImportScreen.ts"
import { decodeLine, type FileLine, forEachLine, ImportRejected } from "./Lines.ts"

const COUNTED: ReadonlyArray<keyof Counts> = ["memories", "documents", "memory_models", "user_profiles", "settings"]

/** What the first reading found. */
export interface Checked {
  /** Records in the file (the header and end lines not counted). */
  readonly lines: number
  readonly reembed: number
  readonly redactedLines: number
  readonly detectors: ReadonlyArray<Detector>
}

const blockedMessage = (line: number, rule: Rule) => `line ${line}: blocked by the space's rule "${rule.name}" (detector ${rule.detector})`

/** A line of the file, or the job's failure naming it. */
export const lineOf = (line: FileLine) =>
  Either.match(decodeLine(line), {
    onLeft: (message) => Effect.fail(new ImportRejected({ message })),
    onRight: (value) => Effect.succeed(value)
  })

/** A memory keeps its vector when this server's model made it and its text is as it was. */
export const keepsVector = (embedder: EmbedderShape, line: MemoryLine, textChanged: boolean) =>
  !textChanged && line.embedding !== null && line.embedding_model === embedder.id &&
  Buffer.from(line.embedding, "base64").length === embedder.dimensions * 4

export const checkFile = (deps: {
  readonly space: SpaceRef
  readonly jobs: PortabilityRepo
  readonly webhooks: WebhookRepo
  readonly embedder: EmbedderShape
}) => {
  const { jobs, space } = deps
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))
  /** First reading: every line decodes, the file is whole and consistent, and no rule blocks a line. */
  return (job: PortabilityJob, rules: ReadonlyArray<CompiledRule>) =>
    Effect.gen(function*() {
      let header = false
      let end: Extract<Line, { kind: "end" }> | undefined
      let last = 0
      const counts = { memories: 0, documents: 0, memory_models: 0, user_profiles: 0, settings: 0 }
      const seen = { memories: new Set<string>(), documents: new Set<string>(), models: new Set<string>(), users: new Set<string>(), settings: new Set<string>() }
      const referenced = new Map<string, number>()
      const detectors = new Set<Detector>()
      let reembed = 0
      let redactedLines = 0
      const once = (set: Set<string>, key: string, line: number, what: string) =>
        set.has(key) ? Effect.fail(new ImportRejected({ message: `line ${line}: ${what} appears twice in the file` })) : Effect.sync(() => set.add(key))
      const block = (line: number, rule: Rule, documentId: string | null) =>
        Effect.gen(function*() {
          const at = yield* now
          yield* deps.webhooks.enqueue(space, [policyTriggered(space, {
            action: "block",
            detector: rule.detector,
            matchedTypes: [rule.detector],
            documentId,
            message: `${blockedMessage(line, rule)}; nothing of the import was stored`
          }, at)], at)
          return yield* new ImportRejected({ message: blockedMessage(line, rule) })
        })

      yield* forEachLine((part) => jobs.readPart(job.jobId, part), (file) =>
        Effect.gen(function*() {
          last = file.number
          const line = yield* lineOf(file)
          if (!header && line.kind !== "header") {
            return yield* new ImportRejected({ message: `line ${file.number}: the file does not start with the header line of an Engram export` })
          }
          if (end !== undefined) return yield* new ImportRejected({ message: `line ${file.number}: a line follows the end line` })
          switch (line.kind) {
            case "header":
              if (header) return yield* new ImportRejected({ message: `line ${file.number}: a second header line` })
              header = true
              return
            case "memory": {
              yield* once(seen.memories, line.id, file.number, `memory ${line.id}`)
              counts.memories++
              if (!referenced.has(line.document_id)) referenced.set(line.document_id, file.number)
              const screened = screenMemory(rules, line)
              if (screened.blockedBy !== undefined) return yield* block(file.number, screened.blockedBy, line.document_id)
              if (screened.redacted.length > 0) redactedLines++
              for (const d of screened.redacted) detectors.add(d)
              if (!keepsVector(deps.embedder, line, screened.line.text !== line.text)) reembed++
              return
            }
            case "document":
              counts.documents++
              return yield* once(seen.documents, line.document_id, file.number, `document ${line.document_id}`)
            case "memory_model": {
              yield* once(seen.models, line.model_id, file.number, `memory model ${line.model_id}`)
              counts.memory_models++
              const screened = screenModel(rules, line)
              if (screened.blockedBy !== undefined) return yield* block(file.number, screened.blockedBy, null)
              if (screened.redacted.length > 0) redactedLines++
              for (const d of screened.redacted) detectors.add(d)
              return
            }
            case "user_profile":
              counts.user_profiles++
              return yield* once(seen.users, line.user_id, file.number, `user profile ${line.user_id}`)
            case "settings":
              counts.settings++
              return yield* once(seen.settings, line.setting, file.number, `settings ${line.setting}`)
            case "end":
              end = line
          }
        }))
      if (!header) return yield* new ImportRejected({ message: "the file is empty" })
      if (end === undefined) {
        return yield* new ImportRejected({ message: `the file ends at line ${last} without its end line: it was cut short` })
      }
      for (const kind of COUNTED) {
        const expected = end.counts[kind]
        const count = counts[kind]
        if (expected !== count) {
          return yield* new ImportRejected({ message: `the end line counts ${expected} ${kind.replace("_", " ")}; the file holds ${count}` })
        }
      }
      for (const [documentId, line] of referenced) {
        if (!seen.documents.has(documentId)) {
          return yield* new ImportRejected({ message: `line ${line}: the memory's document ${documentId} is not in the file` })
        }
      }
      const lines = Object.values(counts).reduce((a, b) => a + b, 0)
      return { lines, reembed, redactedLines, detectors: [...detectors] } satisfies Checked
    })
}
