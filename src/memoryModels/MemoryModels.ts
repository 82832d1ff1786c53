/**
 * What the memory-model endpoints do: definitions are read and written in the
 * store directly; content comes only from refresh jobs, which the space's
 * entity runs (a create queues the first one).
 */
import { Clock, Effect, Option } from "effect"
import { ModelError, NoFields } from "../domain/Errors.ts"
import {
  type CreateModelRequest,
  DEFAULT_MAX_TOKENS,
  DEFAULT_TRIGGER,
  type PatchModelRequest
} from "../domain/MemoryModels.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { type ModelDefinition, ModelRepo, type ModelRow, toMemoryModel } from "../../services/store/ModelRepo.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import { spaceRef } from "../domain/Ids.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { Metering } from "../metering/Metering.ts"
import { RATES } from "../metering/Rates.ts"

/** A generated model_id: the name's words, hyphenated, and a short random tail. */
export const generatedModelId = (name: string) => {
  const slug = name.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "")
  const tail = randomBase62(8).toLowerCase().replace(/[^a-z0-9]/g, "x")
  return slug === "" ? `model-${tail}` : `${slug}-${tail}`
}

const definitionOf = (row: ModelRow): ModelDefinition => ({
  name: row.name,
  query: row.query,
  tags: row.tags,
  maxTokens: row.max_tokens,
  mode: row.trigger_mode,
  refreshOnNew: row.refresh_on_new,
  types: row.trigger_types
})

export class MemoryModels extends Effect.Service<MemoryModels>()("engram/memoryModels/MemoryModels", {
  dependencies: [Spaces.Default, ModelRepo.Default, JobRepo.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    const spaces = yield* Spaces
    const repo = yield* ModelRepo
    const jobs = yield* JobRepo
    const entity = yield* SpaceEntity.client

    /** The caller's space; a missing one is the spec's `model_error`, another organization's 403 as everywhere. */
    const space = (principal: PrincipalShape, spaceId: string) =>
      spaces.get(principal, spaceId).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(new ModelError({ message: `space ${spaceId} not found` }))),
        Effect.as(spaceRef(principal, spaceId))
      )

    const model = (principal: PrincipalShape, spaceId: string, modelId: string) =>
      Effect.gen(function*() {
        const ref = yield* space(principal, spaceId)
        const found = yield* repo.find(ref, modelId)
        if (Option.isNone(found)) return yield* new ModelError({ message: `memory model ${modelId} not found` })
        return { ref, row: found.value }
      })

    /** The model as stored now, in a space already checked. */
    const reread = (ref: SpaceRef, modelId: string) =>
      Effect.flatMap(repo.find(ref, modelId), Option.match({
        onNone: () => Effect.fail(new ModelError({ message: `memory model ${modelId} not found` })),
        onSome: (row) => Effect.succeed(toMemoryModel(row))
      }))

    /** Queues a refresh as a job of the space and wakes its entity (the waker catches a lost wake-up). */
    const queueRefresh = (principal: PrincipalShape, spaceId: string, modelId: string) =>
      Effect.gen(function*() {
        const jobId = `job_${randomBase62(20)}`
        yield* jobs.createRefresh(spaceRef(principal, spaceId), jobId, modelId, new Date(yield* Clock.currentTimeMillis))
        yield* entity(spaceEntityId(spaceRef(principal, spaceId))).Wake(undefined, { discard: true }).pipe(
          Effect.catchAll((e) => Effect.logWarning("wake not delivered; the refresh runs at the waker's next round", e))
        )
        return { model_id: modelId, job_id: jobId, status: "queued" as const }
      })

    return {
      create: Effect.fn("MemoryModels.create")(function*(principal: PrincipalShape, spaceId: string, body: CreateModelRequest) {
        const ref = yield* space(principal, spaceId)
        // Admitted while credits remain for the base; the refresh is debited when the model has answered.
        yield* metering.requireCredits(principal.orgId, RATES.insight)
        const modelId = body.model_id ?? generatedModelId(body.name)
        yield* repo.create(ref, modelId, {
          name: body.name.trim(),
          query: body.query.trim(),
          tags: body.tags ?? [],
          maxTokens: body.max_tokens ?? DEFAULT_MAX_TOKENS,
          mode: body.trigger?.mode ?? DEFAULT_TRIGGER.mode,
          refreshOnNew: body.trigger?.refresh_on_new_memories ?? DEFAULT_TRIGGER.refresh_on_new_memories,
          types: body.trigger?.memory_type ?? DEFAULT_TRIGGER.memory_type
        }, new Date(yield* Clock.currentTimeMillis))
        return yield* queueRefresh(principal, spaceId, modelId)
      }),

      list: (principal: PrincipalShape, spaceId: string, query: { limit: number; offset: number; tags?: ReadonlyArray<string> | undefined }) =>
        Effect.gen(function*() {
          const ref = yield* space(principal, spaceId)
          const page = yield* repo.list(ref, { limit: query.limit, offset: query.offset, tags: query.tags ?? [] })
          return { items: page.items.map(toMemoryModel), total: page.total, limit: query.limit, offset: query.offset }
        }),

      get: (principal: PrincipalShape, spaceId: string, modelId: string) =>
        Effect.map(model(principal, spaceId, modelId), ({ row }) => toMemoryModel(row)),

      update: Effect.fn("MemoryModels.update")(function*(principal: PrincipalShape, spaceId: string, modelId: string, patch: PatchModelRequest) {
        if (Object.keys(patch).length === 0) {
          return yield* new NoFields({ message: "send at least one field to change: name, query, tags, max_tokens or trigger" })
        }
        const { ref, row } = yield* model(principal, spaceId, modelId)
        const current = definitionOf(row)
        yield* repo.update(ref, modelId, {
          name: patch.name?.trim() ?? current.name,
          query: patch.query?.trim() ?? current.query,
          tags: patch.tags ?? current.tags,
          maxTokens: patch.max_tokens ?? current.maxTokens,
          mode: patch.trigger?.mode ?? current.mode,
          refreshOnNew: patch.trigger?.refresh_on_new_memories ?? current.refreshOnNew,
          types: patch.trigger?.memory_type === undefined ? current.types : patch.trigger.memory_type
        }, new Date(yield* Clock.currentTimeMillis))
        return yield* reread(ref, modelId)
      }),

      refresh: (principal: PrincipalShape, spaceId: string, modelId: string) =>
        model(principal, spaceId, modelId).pipe(
          Effect.zipRight(metering.requireCredits(principal.orgId, RATES.insight)),
          Effect.zipRight(queueRefresh(principal, spaceId, modelId))
        ),

      clear: (principal: PrincipalShape, spaceId: string, modelId: string) =>
        Effect.gen(function*() {
          const { ref } = yield* model(principal, spaceId, modelId)
          yield* repo.clear(ref, modelId, new Date(yield* Clock.currentTimeMillis))
          return yield* reread(ref, modelId)
        }),

      delete: (principal: PrincipalShape, spaceId: string, modelId: string) =>
        Effect.gen(function*() {
          const ref = yield* space(principal, spaceId)
          if (!(yield* repo.delete(ref, modelId))) return yield* new ModelError({ message: `memory model ${modelId} not found` })
        }),

      history: (principal: PrincipalShape, spaceId: string, modelId: string) =>
        Effect.gen(function*() {
          const { ref } = yield* model(principal, spaceId, modelId)
          const entries = yield* repo.history(ref, modelId)
          return { entries, total: entries.length }
        })
    }
  })
}) {}
