/**
 * What the memory endpoints do: resolve the caller's space, then hand the
 * write, recall or edit to the space's entity; reads of the list and history
 * go straight to PostgreSQL, the source of truth.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound, ServiceUnavailable, ValidationError } from "../domain/Errors.ts"
import type { BatchRequest, MemoryListQuery, PatchMemoryRequest, RecordItem, RetrieveRequest } from "../domain/Memories.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { CurrentRequestId } from "../domain/RequestContext.ts"
import { spaceRef, type SpaceRef } from "../domain/Ids.ts"
import { listItem } from "../domain/MemoryViews.ts"
import { type Exclusion, SpaceEntity, spaceEntityId, SpaceMissing, type WriteItem } from "../domain/SpaceProtocol.ts"
import { estimateTokens } from "../../services/llm/Provider.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { type Need, Spaces } from "../spaces/Spaces.ts"
import { Rules } from "../security/Rules.ts"
import { Injections } from "../metering/Injections.ts"
import { Metering } from "../metering/Metering.ts"
import { RATES } from "../metering/Rates.ts"
import { capExclusions, Receipts } from "./Receipts.ts"
import { flagsOf } from "../security/Screen.ts"
import { type BlockOrder, boundaryFor, escapeRecalled, fence, frameChars } from "../security/Fence.ts"


/**
 * Memories for a model, as a fenced section (src/security/Fence.ts): whole
 * memories only, numbered, each escaped onto one line, lowest-ranked dropped
 * first so that the whole section, frame included, fits the budget. A memory
 * a rule flagged says so on its line. `lines` is the section's body, for a
 * caller that renders the same memories in another order.
 */
export const selectBlock = <T extends { readonly memory_id: string; readonly content: string; readonly metadata?: unknown }>(
  results: ReadonlyArray<T>,
  budget: number | undefined,
  order: BlockOrder = "relevance"
) => {
  const kept: Array<T> = []
  const dropped: Array<Exclusion> = []
  const lines: Array<string> = []
  const frame = frameChars(order)
  let chars = 0
  for (const result of results) {
    const flags = flagsOf(result.metadata)
    const note = flags.length === 0 ? "" : `(flagged by a rule: ${flags.join(", ")}) `
    const line = `${kept.length + 1}. ${note}${escapeRecalled(result.content)}`
    const next = lines.length === 0 ? line.length : chars + 1 + line.length
    if (budget !== undefined && Math.ceil((frame + next) / 4) > budget) {
      dropped.push({ memory_id: result.memory_id, reason: "budget", detail: `would exceed context_max_tokens ${budget}` })
      continue
    }
    kept.push(result)
    lines.push(line)
    chars = next
  }
  return { kept, dropped, lines }
}

/** The fenced section of `selectBlock`'s lines, with a boundary of its own, and its token estimate. */
export const fenceBlock = (lines: ReadonlyArray<string>, order: BlockOrder = "relevance") =>
  Effect.sync(() => {
    const context = fence(lines, order, boundaryFor(lines, order))
    return { context, tokens: estimateTokens(context) }
  })

/** Selects and fences in one step: the kept memories, the dropped ones, the section and its tokens. */
export const renderBlock = <T extends { readonly memory_id: string; readonly content: string; readonly metadata?: unknown }>(
  results: ReadonlyArray<T>,
  budget: number | undefined,
  order: BlockOrder = "relevance"
) => {
  const selected = selectBlock(results, budget, order)
  return Effect.map(fenceBlock(selected.lines, order), (block) => ({ ...selected, ...block }))
}

/** Memories in the order they were stored (then by id): the `stable` block order. */
const storedOrder = <T extends { readonly memory_id: string; readonly created_at: string }>(items: ReadonlyArray<T>) =>
  [...items].sort((a, b) => a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.memory_id < b.memory_id ? -1 : 1)

const clusterDown = (error: { _tag: string }) =>
  new ServiceUnavailable({ message: `the space is temporarily unavailable (${error._tag}); retry shortly` })

/** What the cluster client itself can fail with (mailbox full, storage down), as a 503. */
export const reachable = { MailboxFull: clusterDown, AlreadyProcessingMessage: clusterDown, PersistenceError: clusterDown }


export class MemoryService extends Effect.Service<MemoryService>()("engram/space/MemoryService", {
  dependencies: [Spaces.Default, MemoryRepo.Default, JobRepo.Default, Receipts.Default, Metering.Default, Injections.Default, Rules.Default],
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    const injections = yield* Injections
    const spaces = yield* Spaces
    const memories = yield* MemoryRepo
    const jobs = yield* JobRepo
    const receipts = yield* Receipts
    const entity = yield* SpaceEntity.client
    const rules = yield* Rules

    const at = (ref: SpaceRef) => entity(spaceEntityId(ref))

    /**
     * Requests go to the caller's own space first, which its entity knows
     * without a query; only when the caller holds no such space is the store
     * asked whether another organization shares one under that id (and with
     * which access), so sharing costs nothing on the common path and a
     * removed member is refused at once on every node. The caller's
     * organization is charged for what it does in a shared space.
     */
    const viaShare = <A, E, R>(
      principal: PrincipalShape,
      spaceId: string,
      need: Need,
      run: (ref: SpaceRef) => Effect.Effect<A, E | SpaceMissing, R>
    ) =>
      run(spaceRef(principal, spaceId)).pipe(
        Effect.catchTag("SpaceMissing", () =>
          spaces.access(principal, spaceId, need).pipe(
            Effect.flatMap((ref) =>
              ref.orgId === principal.orgId
                ? Effect.fail(new SpaceMissing({ message: `space ${spaceId} not found` }))
                : run(ref)
            ),
            Effect.catchTag("SpaceMissing", whyMissing(principal, spaceId))
          ))
      )

    const toWriteItem = (principal: PrincipalShape, item: RecordItem, now: number): WriteItem => ({
      content: item.content,
      documentId: item.document_id ?? null,
      eventTime: new Date(item.timestamp === undefined ? now : Date.parse(item.timestamp)).toISOString(),
      userId: item.user_id ?? null,
      agentId: item.agent_id ?? null,
      sessionId: item.session_id ?? null,
      memberId: principal.credential._tag === "Session" ? principal.userId : null,
      metadata: item.metadata ?? {},
      tags: item.tags ?? [],
      context: item.context ?? ""
    })

    const enqueue = Effect.fn("Memories.enqueue")(function*(principal: PrincipalShape, spaceId: string, items: ReadonlyArray<RecordItem>) {
      // Admitted while the credits cover every item; each memory is debited as it is stored.
      yield* metering.requireCredits(principal.orgId, items.length * RATES.memory_stored)
      const ref = yield* spaces.forWrite(principal, spaceId)
      const now = yield* Clock.currentTimeMillis
      const jobId = `job_${randomBase62(20)}`
      // The space's rules run before the job is stored: a queued payload never holds what they redact or block.
      const screened = yield* rules.screen(ref, items.map((item) => toWriteItem(principal, item, now)))
      // What the rules did is reported in the job's own transaction: if and only if the job is acknowledged.
      const events = screened.flatMap((s) => (s.event === undefined ? [] : [s.event]))
      // The space's entity stores the job itself and drains it: acknowledged once its rows are durable.
      yield* at(ref).Enqueue({
        jobId,
        items: screened.map((s) => s.write),
        receivedAt: now,
        refused: screened.flatMap((s, position) => (s.blocked === undefined ? [] : [[position, s.blocked] as const])),
        events
      }).pipe(Effect.catchTags(reachable))
      return { job_id: jobId, space_id: spaceId, status: "queued" as const, items: items.length }
    })

    /** The 403 or 404 for a space the entity reports missing. */
    const whyMissing = (principal: PrincipalShape, spaceId: string) => () => spaces.missing(principal.orgId, spaceId)

    /**
     * One write through the space's rules, with the event to queue in the
     * transaction that makes it. A blocked write stores nothing: its event is
     * queued alone, the entity woken to deliver it, and the call refused (422).
     */
    const screenOne = Effect.fn("Memories.screenOne")(function*(ref: SpaceRef, write: WriteItem, refused: string) {
      const [screened] = yield* rules.screen(ref, [write])
      const events = screened?.event === undefined ? [] : [screened.event]
      if (screened === undefined || screened.blocked === undefined) return { write: screened?.write ?? write, events }
      yield* rules.report(ref, events)
      yield* at(ref).Wake(undefined, { discard: true }).pipe(Effect.ignore)
      return yield* new ValidationError({ message: `${refused}: ${screened.blocked}` })
    })

    /** An edit's new text, context and metadata pass the space's rules like a write: redacted, or the edit refused. */
    const screenEdit = Effect.fn("Memories.screenEdit")(function*(principal: PrincipalShape, ref: SpaceRef, patch: PatchMemoryRequest) {
      if (patch.text === undefined && patch.context === undefined && patch.metadata === undefined) return { ...patch, events: [] }
      const now = yield* Clock.currentTimeMillis
      const item = toWriteItem(principal, { content: patch.text ?? "", context: patch.context, metadata: patch.metadata }, now)
      const { events, write } = yield* screenOne(ref, item, "this edit was not made")
      return {
        ...patch,
        ...(patch.text === undefined ? {} : { text: write.content }),
        ...(patch.context === undefined ? {} : { context: write.context }),
        ...(patch.metadata === undefined ? {} : { metadata: write.metadata }),
        events
      }
    })

    /**
     * A synchronous write goes straight to the space's entity, which knows
     * whether the space exists; only a first write to a new space pays for
     * creating it (or the 403 when another organization holds the id).
     */
    const record = Effect.fn("Memories.record")(function*(principal: PrincipalShape, spaceId: string, item: RecordItem) {
      yield* metering.requireCredits(principal.orgId, RATES.memory_stored)
      const now = yield* Clock.currentTimeMillis
      /** Screened with the rules of the space it reaches, then written by that space's entity. */
      const writeTo = (ref: SpaceRef) =>
        Effect.gen(function*() {
          const { events, write } = yield* screenOne(ref, toWriteItem(principal, item, now), "this item was not stored")
          return yield* at(ref).Write({ items: [write], events }).pipe(Effect.catchTags(reachable))
        })
      const [result] = yield* writeTo(spaceRef(principal, spaceId)).pipe(
        Effect.catchTag("SpaceMissing", () =>
          spaces.forWrite(principal, spaceId).pipe(
            Effect.flatMap(writeTo),
            Effect.catchTag("SpaceMissing", whyMissing(principal, spaceId))
          ))
      )
      yield* metering.reportBalance(principal.orgId)
      const output = result!.memories.reduce((n, m) => n + estimateTokens(m.content), 0)
      return {
        space_id: spaceId,
        document_id: result!.documentId,
        status: "completed" as const,
        memories: result!.memories,
        usage: { input_tokens: estimateTokens(item.content), output_tokens: output }
      }
    })

    const retrieve = Effect.fn("Memories.retrieve")(function*(principal: PrincipalShape, request: RetrieveRequest) {
      const full = request.receipt_detail === "full"
      const recalled = yield* viaShare(principal, request.space_id, "read", (ref) => at(ref).Recall({
        query: request.query,
        limit: request.top_k ?? request.limit ?? 10,
        memoryTypes: request.memory_type ?? null,
        userId: request.user_id ?? null,
        agentId: request.agent_id ?? null,
        sessionId: request.session_id ?? null,
        tags: request.tags ?? null,
        tagsMatch: request.tags_match ?? "any",
        minScore: request.min_score ?? null,
        preferObservations: request.prefer_observations ?? true,
        asOf: request.as_of ?? null,
        queryTime: request.query_timestamp ?? null,
        mode: request.mode ?? "accurate",
        full
      }).pipe(Effect.catchTags(reachable)))
      // Paid for once it has answered (a missing space costs nothing); refused, not overdrawn, when credits are spent.
      yield* metering.charge(principal.orgId, "search", { spaceId: request.space_id })

      let results = recalled.results
      const excluded = [...recalled.excluded]
      let block: { context: string; tokens: number } | undefined
      if (request.format === "block") {
        const order = request.block_order ?? "relevance"
        const selected = selectBlock(results, request.context_max_tokens, order)
        results = selected.kept
        excluded.push(...selected.dropped)
        // Chosen by relevance; `stable` then lists them in the order they were stored.
        const lines = order === "stable" ? selectBlock(storedOrder(selected.kept), undefined, order).lines : selected.lines
        block = yield* fenceBlock(lines, order)
        yield* injections.record({
          orgId: principal.orgId,
          spaceId: request.space_id,
          userId: request.user_id ?? null,
          agentId: request.agent_id ?? null,
          sessionId: request.session_id ?? null
        }, block.context)
      }
      const requestId = yield* CurrentRequestId
      yield* receipts.save(principal.orgId, {
        request_id: requestId,
        space_id: request.space_id,
        included: results.map((r) => {
          const flags = flagsOf(r.metadata)
          return {
            memory_id: r.memory_id,
            relevance_score: r.relevance_score ?? 0,
            token_estimate: estimateTokens(r.content),
            ...(flags.length === 0 ? {} : { flags })
          }
        }),
        ...capExclusions(excluded),
        token_accounting: block ? { block_tokens: block.tokens, budget: request.context_max_tokens ?? null } : {},
        engine_stages: full
      })
      return {
        results,
        usage: { input_tokens: recalled.queryTokens },
        ...(block ? { context: block.context, token_estimate: block.tokens } : {}),
        ...(request.receipt === true ? { receipt_id: requestId } : {})
      }
    })

    return {
      record,
      enqueue,
      retrieve,
      batch: (principal: PrincipalShape, request: BatchRequest) => enqueue(principal, request.space_id, request.items),

      job: (principal: PrincipalShape, spaceId: string, jobId: string) =>
        spaces.access(principal, spaceId, "read").pipe(
          Effect.flatMap((ref) => jobs.get(ref.orgId, spaceId, jobId)),
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `job ${jobId} not found` })),
            onSome: Effect.succeed
          }))
        ),

      cancel: (principal: PrincipalShape, spaceId: string, jobId: string) =>
        spaces.access(principal, spaceId, "write").pipe(
          Effect.flatMap((ref) => Effect.flatMap(Clock.currentTimeMillis, (now) => jobs.cancel(ref.orgId, spaceId, jobId, new Date(now)))),
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `job ${jobId} not found` })),
            onSome: Effect.succeed
          }))
        ),

      list: (principal: PrincipalShape, spaceId: string, query: MemoryListQuery) =>
        spaces.access(principal, spaceId, "read").pipe(
          Effect.flatMap((ref) => memories.list(ref, query)),
          Effect.map(({ items, total }) => ({ items: items.map(listItem), total, limit: query.limit, offset: query.offset }))
        ),

      patch: (principal: PrincipalShape, spaceId: string, memoryId: string, patch: PatchMemoryRequest) =>
        viaShare(principal, spaceId, "write", (ref) =>
          Effect.gen(function*() {
            const screened = yield* screenEdit(principal, ref, patch)
            return yield* at(ref).Edit({ memoryId, ...screened }).pipe(Effect.catchTags(reachable))
          })),

      forget: (principal: PrincipalShape, spaceId: string, memoryId: string) =>
        viaShare(principal, spaceId, "write", (ref) => at(ref).Forget({ memoryId }).pipe(Effect.catchTags(reachable))).pipe(
          Effect.flatMap((deleted) => deleted ? Effect.void : Effect.fail(new NotFound({ message: `memory ${memoryId} not found` })))
        ),

      history: (principal: PrincipalShape, spaceId: string, memoryId: string) =>
        Effect.gen(function*() {
          const ref = yield* spaces.access(principal, spaceId, "read")
          if (Option.isNone(yield* memories.find(ref, memoryId))) {
            return yield* new NotFound({ message: `memory ${memoryId} not found` })
          }
          const entries = yield* memories.history(ref, memoryId)
          return { memory_id: memoryId, entries, total: entries.length }
        }),

      receipt: (principal: PrincipalShape, requestId: string) =>
        receipts.find(principal.orgId, requestId).pipe(
          Effect.mapError((e) => new ServiceUnavailable({ message: e.message })),
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `no receipt ${requestId} (receipts expire after about an hour)` })),
            onSome: Effect.succeed
          }))
        )
    }
  })
}) {}
