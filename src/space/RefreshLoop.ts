/**
 * The space's memory-model loop. Refreshes are jobs of the space in the
 * store (a create, a refresh call, or this loop's own scheduling queues
 * them), run oldest first: the memories are read at a settled moment, the
 * reason engine writes the answer outside the writer, and the content with
 * the job's settling is applied in one transaction, never partially.
 *
 * Scheduling: after new memories are recorded, once they have settled for
 * the debounce (MODEL_REFRESH_DEBOUNCE_SECONDS) or, under a steady stream of
 * writes, at the latest MAX_WAIT debounces after the first, the models that
 * refresh on new memories and have some are given a queued refresh. What is
 * due is read from the store, so a restart or a moved shard resumes it.
 */
import { type Clock, Data, Duration, Effect, Either, Option, Queue } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"
import type { Recall } from "../domain/SpaceProtocol.ts"
import type { RecallResult } from "../domain/SpaceProtocol.ts"
import { randomBoundary } from "../security/Fence.ts"
import { deltaPrompt, fullPrompt, localDelta, localFull, memoryBlock, type Source } from "../memoryModels/Content.ts"
import type { CallFailure, LanguageModels } from "../models/LanguageModels.ts"
import type { ReasonSettings } from "../reason/ReasonSettings.ts"
import type { SpaceProfiles } from "../reason/SpaceProfiles.ts"
import type { CatalogShape, ModelSpec } from "../../services/llm/Catalog.ts"
import type { JobRepo } from "../../services/store/JobRepo.ts"
import type { ModelRepo, ModelRow } from "../../services/store/ModelRepo.ts"
import type { SpaceRepo } from "../../services/store/SpaceRepo.ts"
import type { LedgerRepo } from "../../services/store/LedgerRepo.ts"
import { RATES, tokenCredits } from "../metering/Rates.ts"
import type { LedgerEntry } from "../../services/store/LedgerRepo.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { makeSettling } from "./Settling.ts"
import type { SpaceWriter } from "./SpaceWriter.ts"
import type { LoopStep } from "./SupervisedLoop.ts"
import type { ServiceUnavailable } from "../domain/Errors.ts"

/** The engine could not write a model's answer (a failing model, an answer that does not fit, a model no longer served). */
export class RefreshFailure extends Data.TaggedError("RefreshFailure")<{ readonly message: string }> {}

/** Under a steady stream of writes, a due refresh waits at most this many debounces. */
export const MAX_WAIT = 4
/** Attempts at one refresh (a model that fails, an answer that does not fit) before its job is failed. */
export const REFRESH_ATTEMPTS = 3
/** Tokens of memories a catalog model is given for one refresh. */
const MEMORY_BUDGET = 6_000
/** Memories recalled for a standing question. */
const RECALL_LIMIT = 40

export const makeRefresh = (deps: {
  readonly space: SpaceRef
  readonly writer: SpaceWriter
  readonly recall: (recall: Recall) => Effect.Effect<RecallResult, ServiceUnavailable>
  readonly models: ModelRepo
  readonly jobs: JobRepo
  readonly spaces: SpaceRepo
  readonly catalog: CatalogShape
  readonly languageModels: LanguageModels
  readonly reasonSettings: ReasonSettings
  readonly profiles: SpaceProfiles
  readonly debounce: Duration.Duration
  /** Each refresh the model answered is debited (base and tokens). */
  readonly ledger: LedgerRepo
  /** The space's timers; the live clock, or a test's. */
  readonly clock: Clock.Clock
}) =>
  Effect.gen(function*() {
    const { clock, jobs, models, space, writer } = deps
    const signal = yield* Queue.sliding<void>(1)
    const attempts = new Map<string, number>()
    /** The debounce ran out: the next step asks the store which models are due. */
    let due = false
    /** Woken from outside: the next step also schedules models whose memories have been quiet for the debounce. */
    let quiet = false

    const settling = yield* makeSettling({
      clock,
      delay: deps.debounce,
      maxWait: MAX_WAIT,
      settled: Effect.suspend(() => {
        due = true
        return Queue.offer(signal, undefined).pipe(Effect.asVoid)
      })
    })

    /** New memories were recorded: the debounce starts over. */
    const recorded = settling.changed

    /**
     * Woken (a create or a refresh call queued one; the waker saw work due):
     * run what is queued, and schedule the models whose debounce has passed.
     */
    const woken = Effect.suspend(() => {
      quiet = true
      return Queue.offer(signal, undefined).pipe(Effect.asVoid)
    })

    /**
     * The entity was activated: models left due (by a restart, a moved shard,
     * a passivation) are scheduled as if their memories had just been recorded.
     */
    const activated = Effect.gen(function*() {
      if ((yield* models.dueRefreshes(space, null)).length > 0) yield* recorded
    })

    /** The space's reason model: its setting, else the platform default; a setting no longer served fails the refresh. */
    const chooseModel = Effect.gen(function*() {
      const stored = yield* deps.reasonSettings.storedModel(space.orgId, space.spaceId)
      if (Option.isNone(stored)) return deps.catalog.defaultModel
      return yield* Option.match(deps.catalog.resolve(stored.value), {
        onNone: () => Effect.fail(new RefreshFailure({ message: `the space's reason model ${stored.value} is not served` })),
        onSome: Effect.succeed
      })
    })

    const recallFor = (model: ModelRow) =>
      deps.recall({
        query: model.query,
        limit: RECALL_LIMIT,
        memoryTypes: model.trigger_types ?? ["fact", "experience", "note"],
        userId: null,
        agentId: null,
        sessionId: null,
        tags: model.tags.length === 0 ? null : model.tags,
        tagsMatch: "any_strict",
        minScore: null,
        preferObservations: true,
        asOf: null,
        queryTime: null,
        mode: "accurate",
        full: false
      })

    const asFailure = (error: CallFailure) => new RefreshFailure({ message: `${error._tag}: ${error.message}` })

    /** The answer by a catalog model; one that does not end within max_tokens is not written. */
    const byModel = (spec: ModelSpec, model: ModelRow, sources: ReadonlyArray<Source>, previous: string | null) =>
      Effect.gen(function*() {
        const space_ = yield* deps.spaces.find(space.orgId, space.spaceId)
        const profile = yield* deps.profiles.stored(space.orgId, space.spaceId)
        const { block, kept } = memoryBlock(sources, MEMORY_BUDGET, yield* Effect.sync(randomBoundary))
        const input = {
          spaceName: Option.match(space_, { onNone: () => space.spaceId, onSome: (s) => s.name }),
          profile,
          name: model.name,
          maxTokens: model.max_tokens,
          block
        }
        const completion = yield* deps.languageModels.complete(spec, {
          system: previous === null ? fullPrompt(input) : deltaPrompt(input, previous),
          messages: [{ role: "user", content: model.query }],
          memories: kept.map((m) => m.content),
          maxTokens: model.max_tokens,
          extra: {}
        }).pipe(Effect.mapError(asFailure))
        // Billed like reason, once the model has answered: the base and the tokens, never refused (it was
        // admitted). The entries are written with the content, in its transaction: a refresh that is not
        // written is not charged, and one that is, is charged once.
        const at = new Date(clock.unsafeCurrentTimeMillis())
        const entry = { orgId: space.orgId, spaceId: space.spaceId, requestId: null, at }
        const charges: ReadonlyArray<LedgerEntry> = [
          { ...entry, opType: "insight", quantity: 1, credits: RATES.insight },
          {
            ...entry,
            opType: "model_tokens",
            quantity: completion.usage.input_tokens + completion.usage.output_tokens,
            credits: tokenCredits(completion.usage, spec)
          }
        ]
        if (completion.stopReason === "length" || completion.text.trim() === "") {
          return yield* new RefreshFailure({
            message: completion.text.trim() === "" ? `${spec.id} answered nothing` : `${spec.id}'s answer did not end within max_tokens`
          })
        }
        return { text: completion.text.trim(), charges }
      })

    /** One queued refresh, start to finish. */
    const refreshOne = (item: Parameters<SpaceWriter["applyRefresh"]>[0], model: ModelRow) =>
      Effect.gen(function*() {
        const spec = yield* chooseModel
        const refreshedAt = yield* writer.settledAt
        const recalled = (yield* recallFor(model)).results
        const previous = model.content
        // Delta edits what is there, unless there is nothing, the question changed, or a source was deleted or edited.
        const delta = model.trigger_mode === "delta" && previous !== null && model.refreshed_query === model.query &&
          !model.marked_stale && model.last_refreshed_at !== null
        const since = model.last_refreshed_at?.getTime() ?? 0
        const sources = delta ? recalled.filter((m) => Date.parse(m.created_at) > since) : recalled
        const config = { name: model.name, query: model.query, maxTokens: model.max_tokens }
        const { charges, text: content } = spec.provider === "local"
          ? { text: delta ? localDelta(config, previous, recalled, since) : localFull(config, recalled), charges: [] }
          : yield* byModel(spec, model, sources, delta ? previous : null)
        const outcome = yield* writer.applyRefresh(item, model.model_id, content, model.query, refreshedAt, charges)
        yield* Effect.annotateCurrentSpan({
          model_id: model.model_id,
          mode: delta ? "delta" : "full",
          engine: spec.id,
          sources: sources.length,
          outcome
        })
      })

    const step = Effect.gen(function*() {
      if (due || quiet) {
        const now = clock.unsafeCurrentTimeMillis()
        const quietSince = due ? null : new Date(now - Duration.toMillis(deps.debounce))
        due = false
        quiet = false
        for (const modelId of yield* models.dueRefreshes(space, quietSince)) {
          yield* jobs.createRefresh(space, `job_${randomBase62(20)}`, modelId, new Date(now))
        }
      }
      const [next] = yield* jobs.nextRefresh(space)
      if (next === undefined) return { more: false, lagMs: 0 } satisfies LoopStep
      const lagMs = Math.max(0, clock.unsafeCurrentTimeMillis() - next.item.queuedAt.getTime())
      if (Either.isLeft(next.modelId)) {
        yield* writer.failQueued([next.item], next.modelId.left)
        return { more: true, lagMs } satisfies LoopStep
      }
      const found = yield* models.find(space, next.modelId.right)
      if (Option.isNone(found)) {
        yield* writer.failQueued([next.item], `memory model ${next.modelId.right} was deleted before its refresh ran`)
        return { more: true, lagMs } satisfies LoopStep
      }
      const jobId = next.item.jobId
      const exit = yield* Effect.either(refreshOne(next.item, found.value))
      if (Either.isRight(exit)) {
        attempts.delete(jobId)
        return { more: true, lagMs } satisfies LoopStep
      }
      // A store that is down fails the step as it is (retried with backoff); the engine's failures count.
      if (exit.left._tag !== "RefreshFailure") return yield* exit.left
      const tried = (attempts.get(jobId) ?? 0) + 1
      attempts.set(jobId, tried)
      if (tried < REFRESH_ATTEMPTS) return yield* exit.left
      attempts.delete(jobId)
      yield* Effect.logWarning(`memory model ${found.value.model_id} could not be refreshed: ${exit.left.message}`)
      yield* writer.failQueued([next.item], `the refresh failed after ${tried} attempts: ${exit.left.message}`)
      return { more: true, lagMs } satisfies LoopStep
    })

    return { recorded, woken, activated, signal: Queue.take(signal), step }
  })
