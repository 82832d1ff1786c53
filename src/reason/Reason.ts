/**
 * Reason: recall a space's memories for a question (following the entities
 * the first recall names, at depth), and have a catalog model answer from
 * them under the space's profile. The model is the request's, else the
 * space's reason setting, else the platform default. Ask about a user runs
 * the same pass, scoped strictly to that user_id.
 */
import { Effect, Option } from "effect"
import { ServiceUnavailable } from "../domain/Errors.ts"
import type { RetrieveItem } from "../domain/Memories.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { Depth } from "../domain/Reason.ts"
import type { Space } from "../domain/Spaces.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { OrgId, SpaceId } from "../domain/Ids.ts"
import { LanguageModels } from "../models/LanguageModels.ts"
import { renderBlock } from "../space/MemoryService.ts"
import { Metering } from "../metering/Metering.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { Catalog, type ModelSpec } from "../../services/llm/Catalog.ts"
import type { ModelUsage } from "../../services/llm/Provider.ts"
import { type PromptInput, reviewPrompt, systemPrompt } from "./Prompt.ts"
import { ReasonSettings, resolveModel } from "./ReasonSettings.ts"
import { SpaceProfiles } from "./SpaceProfiles.ts"

export interface Plan {
  /** Memories recalled for the question. */
  readonly recall: number
  /** Entities named by the first recall (and not by the question) that each get a recall of their own. */
  readonly follow: number
  readonly perEntity: number
  /** Ceiling of the memory block in the prompt (characters / 4); whole memories, lowest-ranked dropped first. */
  readonly blockTokens: number
  /** Ceiling of each answer. */
  readonly maxTokens: number
  /** A second model call checks the draft against the memories. */
  readonly review: boolean
}

export const DEPTHS: Readonly<Record<Depth, Plan>> = {
  quick: { recall: 8, follow: 0, perEntity: 0, blockTokens: 2_000, maxTokens: 512, review: false },
  standard: { recall: 20, follow: 3, perEntity: 5, blockTokens: 4_000, maxTokens: 1_024, review: false },
  thorough: { recall: 40, follow: 6, perEntity: 8, blockTokens: 8_000, maxTokens: 2_048, review: true }
}

export interface ReasonRequest {
  readonly space_id: string
  readonly query: string
  readonly model?: string | undefined
  readonly depth?: Depth | undefined
}

export interface Insight {
  readonly insights: string
  readonly model: string
  readonly usage: ModelUsage
}

export interface PassRequest {
  readonly query: string
  readonly model?: string | undefined
  readonly depth?: Depth | undefined
  /** Strict scope: only memories written under this user_id. */
  readonly userId?: string | undefined
}

/** The entities the first recall names that the question (and `known`, e.g. the asked-about user) does not, in rank order. */
export const entitiesToFollow = (
  query: string,
  results: ReadonlyArray<RetrieveItem>,
  count: number,
  known: ReadonlyArray<string> = []
) => {
  const asked = query.toLowerCase()
  const skip = new Set(known.map((name) => name.trim().toLowerCase()))
  const picked = new Map<string, string>()
  for (const result of results) {
    for (const entity of result.entities) {
      const key = entity.trim().toLowerCase()
      if (picked.size >= count) return [...picked.values()]
      if (key.length < 2 || asked.includes(key) || skip.has(key) || picked.has(key)) continue
      picked.set(key, entity.trim())
    }
  }
  return [...picked.values()]
}

interface Prepared {
  readonly spec: ModelSpec
  readonly plan: Plan
  readonly memories: ReadonlyArray<RetrieveItem>
}

const clusterDown = (error: { _tag: string }) =>
  new ServiceUnavailable({ message: `the space is temporarily unavailable (${error._tag}); retry shortly` })

const add = (a: ModelUsage, b: ModelUsage): ModelUsage => ({
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens
})

export class Reason extends Effect.Service<Reason>()("engram/reason/Reason", {
  dependencies: [Spaces.Default, SpaceProfiles.Default, ReasonSettings.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    const spaces = yield* Spaces
    const profiles = yield* SpaceProfiles
    const settings = yield* ReasonSettings
    const catalog = yield* Catalog
    const models = yield* LanguageModels
    const entity = yield* SpaceEntity.client

    /** The request's model, else the space's setting, else the platform default. */
    const chooseModel = (orgId: string, spaceId: string, requested: string | undefined) =>
      requested !== undefined
        ? resolveModel(catalog, requested)
        : Effect.flatMap(settings.storedModel(orgId, spaceId), Option.match({
          onNone: () => Effect.succeed(catalog.defaultModel),
          onSome: (id) => resolveModel(catalog, id)
        }))

    const recall = (orgId: string, spaceId: string, query: string, limit: number, userId: string | null) =>
      entity(spaceEntityId({ orgId: OrgId.make(orgId), spaceId: SpaceId.make(spaceId) })).Recall({
        query,
        limit,
        memoryTypes: null,
        userId,
        agentId: null,
        sessionId: null,
        tags: null,
        tagsMatch: "any",
        minScore: null,
        preferObservations: true,
        asOf: null,
        queryTime: null,
        mode: "accurate",
        full: false
      }).pipe(
        Effect.map((recalled) => recalled.results),
        Effect.catchTags({ MailboxFull: clusterDown, AlreadyProcessingMessage: clusterDown, PersistenceError: clusterDown }),
        Effect.catchTag("SpaceMissing", () => spaces.missing(orgId, spaceId))
      )

    /** The question's recall, then one recall per followed entity; best first, each memory once. */
    const gather = Effect.fn("Reason.gather")(function*(orgId: string, spaceId: string, query: string, plan: Plan, userId: string | null) {
      const first = yield* recall(orgId, spaceId, query, plan.recall, userId)
      const memories = [...first]
      const seen = new Set(first.map((m) => m.memory_id))
      for (const name of entitiesToFollow(query, first, plan.follow, userId === null ? [] : [userId])) {
        for (const m of yield* recall(orgId, spaceId, name, plan.perEntity, userId)) {
          if (seen.has(m.memory_id)) continue
          seen.add(m.memory_id)
          memories.push(m)
        }
      }
      yield* Effect.annotateCurrentSpan({ recalled: first.length, gathered: memories.length })
      return memories
    })

    /** The model and the memories of a pass (model first: an unserved name fails before any recall). */
    const prepare = Effect.fn("Reason.prepare")(function*(principal: PrincipalShape, space: Space, request: PassRequest) {
      const spec = yield* chooseModel(principal.orgId, space.space_id, request.model)
      const depth = request.depth ?? "standard"
      const plan = DEPTHS[depth]
      yield* Effect.annotateCurrentSpan({ space_id: space.space_id, model: spec.id, depth })
      const memories = yield* gather(principal.orgId, space.space_id, request.query, plan, request.userId ?? null)
      return { spec, plan, memories } satisfies Prepared
    })

    /** The model's answer from the memories, under the space's profile; usage summed over every call. */
    const answer = Effect.fn("Reason.answer")(function*(
      principal: PrincipalShape,
      space: Space,
      request: PassRequest,
      prepared: Prepared
    ) {
      const { memories, plan, spec } = prepared
      const block = yield* renderBlock(memories, plan.blockTokens)
      const input: PromptInput = {
        spaceName: space.name,
        profile: yield* profiles.stored(principal.orgId, space.space_id),
        block: block.context,
        userId: request.userId
      }
      const call = (system: string) =>
        models.complete(spec, {
          system,
          messages: [{ role: "user", content: request.query }],
          memories: block.kept.map((m) => m.content),
          maxTokens: plan.maxTokens,
          extra: {}
        })
      // The base is paid before the model is called (refused when credits are spent); its tokens after.
      yield* metering.charge(principal.orgId, "insight", { spaceId: space.space_id })
      const draft = yield* call(systemPrompt(input))
      const final = plan.review ? yield* call(reviewPrompt(input, draft.text)) : undefined
      const usage = final === undefined ? draft.usage : add(draft.usage, final.usage)
      yield* metering.chargeTokens(principal.orgId, space.space_id, usage, spec)
      return { insights: (final ?? draft).text, model: spec.id, usage } satisfies Insight
    })

    /** Across the whole space; the model answers even when nothing was recalled (and says so). */
    const reason = Effect.fn("Reason.reason")(function*(principal: PrincipalShape, request: ReasonRequest) {
      const space = yield* spaces.get(principal, request.space_id)
      return yield* answer(principal, space, request, yield* prepare(principal, space, request))
    })

    /** Scoped to one user; None, and no model call, when nothing about them was recalled. */
    const ask = Effect.fn("Reason.ask")(function*(principal: PrincipalShape, space: Space, request: PassRequest & { userId: string }) {
      const prepared = yield* prepare(principal, space, request)
      if (prepared.memories.length === 0) return Option.none<Insight>()
      return Option.some(yield* answer(principal, space, request, prepared))
    })

    return { reason, ask }
  })
}) {}
