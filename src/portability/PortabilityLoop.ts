/**
 * The space's exports and imports, run one job at a time by its entity (the
 * `portability` loop), in the order they were queued. The jobs live in the
 * store, so whichever node owns the space runs them, after a crash too, and
 * an import queued by the CLI is found by the cluster's waker like any other
 * queued work. An import is the space's one change while it is stored, and
 * the entity's index is rebuilt from the store once it has committed.
 */
import { Clock, Effect, Option, Queue } from "effect"
import type { InternalError, ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import type { EmbedderShape } from "../../services/embedder/Embedder.ts"
import type { ExportRepo } from "../../services/store/ExportRepo.ts"
import type { ImportRepo } from "../../services/store/ImportRepo.ts"
import type { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import type { PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import type { RuleRepo } from "../../services/store/RuleRepo.ts"
import type { WebhookRepo } from "../../services/store/WebhookRepo.ts"
import type { LoopStep } from "../space/SupervisedLoop.ts"
import { runExport } from "./Exporter.ts"
import { makeImporter } from "./Importer.ts"

export const makePortability = (deps: {
  readonly space: SpaceRef
  readonly jobs: PortabilityRepo
  readonly exports: ExportRepo
  readonly imports: ImportRepo
  readonly rules: RuleRepo
  readonly webhooks: WebhookRepo
  readonly ledger: LedgerRepo
  readonly embedder: EmbedderShape
  /** The space's writer: an import's transaction runs as its one change at a time. */
  readonly alone: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | InternalError, R>
  /** Drops the entity's index and loads it again from the store. */
  readonly reload: Effect.Effect<void, ServiceUnavailable>
}) =>
  Effect.gen(function*() {
    const { jobs, space } = deps
    const wake = yield* Queue.sliding<void>(1)
    const exporting = runExport({ space, jobs, exports: deps.exports, embedder: deps.embedder })
    const importer = makeImporter({
      space,
      jobs,
      store: deps.imports,
      rules: deps.rules,
      webhooks: deps.webhooks,
      ledger: deps.ledger,
      embedder: deps.embedder,
      alone: deps.alone,
      afterCommit: deps.reload
    })

    const step: Effect.Effect<LoopStep, ServiceUnavailable> = Effect.gen(function*() {
      const next = yield* jobs.next(space)
      if (Option.isNone(next)) return { more: false, lagMs: 0 }
      const job = next.value
      const lagMs = (yield* Clock.currentTimeMillis) - job.createdAt.getTime()
      yield* job.kind === "export" ? exporting(job) : importer.run(job)
      return { more: true, lagMs }
    }).pipe(Effect.annotateSpans({ space_id: space.spaceId }))

    return { step, signal: Queue.take(wake), nudge: Queue.offer(wake, undefined).pipe(Effect.asVoid) }
  })
