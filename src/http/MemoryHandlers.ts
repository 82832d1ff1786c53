import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { NoFields } from "../domain/Errors.ts"
import type { Queued, Receipt, RecordResponse } from "../domain/Memories.ts"
import { Principal } from "../domain/Principal.ts"
import { MemoryService } from "../space/MemoryService.ts"

type Recorded = typeof RecordResponse.Type | typeof Queued.Type

const explain = (receipt: Receipt, memoryId: string) => {
  const rank = receipt.included.findIndex((i) => i.memory_id === memoryId)
  if (rank >= 0) {
    return {
      request_id: receipt.request_id,
      memory_id: memoryId,
      outcome: "included" as const,
      rank: rank + 1,
      relevance_score: receipt.included[rank]!.relevance_score,
      reason: null,
      detail: null
    }
  }
  const exclusion = receipt.excluded.find((e) => e.memory_id === memoryId)
  return {
    request_id: receipt.request_id,
    memory_id: memoryId,
    outcome: exclusion ? "excluded" as const : "not_considered" as const,
    rank: null,
    relevance_score: null,
    reason: exclusion?.reason ?? null,
    detail: exclusion?.detail ?? (Object.keys(receipt.excluded_truncated).length > 0
      ? "not among the listed exclusions; some reasons were truncated at 50 entries"
      : "not a candidate for this query under its filters")
  }
}

export const MemoryHandlers = HttpApiBuilder.group(EngramApi, "memories", (handlers) =>
  Effect.map(MemoryService, (memories) =>
    handlers
      .handle("record", ({ payload }) =>
        Effect.flatMap(Principal, (principal) => {
          const { space_id, async, ...item } = payload
          return async === true
            ? memories.enqueue(principal, space_id, [item]).pipe(Effect.map((queued): Recorded => queued))
            : memories.record(principal, space_id, item).pipe(Effect.map((stored): Recorded => stored))
        }))
      .handle("batch", ({ payload }) => Effect.flatMap(Principal, (principal) => memories.batch(principal, payload)))
      .handle("legacyAdd", ({ payload }) =>
        Effect.flatMap(Principal, (principal) =>
          memories.record(principal, payload.space_id, {
            content: payload.content,
            ...(payload.context === undefined ? {} : { context: payload.context }),
            ...(payload.timestamp === undefined ? {} : { timestamp: payload.timestamp }),
            ...(payload.metadata === undefined ? {} : { metadata: payload.metadata })
          }).pipe(Effect.map((result) => ({
            memory_id: result.memories[0]?.memory_id ?? "",
            status: result.memories.length > 0 ? "completed" as const : "skipped" as const,
            usage: result.usage
          })))))
      .handle("job", ({ path }) => Effect.flatMap(Principal, (p) => memories.job(p, path.space_id, path.job_id)))
      .handle("cancelJob", ({ path }) => Effect.flatMap(Principal, (p) => memories.cancel(p, path.space_id, path.job_id)))
      .handle("list", ({ path, urlParams }) => Effect.flatMap(Principal, (p) => memories.list(p, path.space_id, urlParams)))
      .handle("patch", ({ path, payload }) =>
        Object.values(payload).every((value) => value === undefined)
          ? new NoFields({ message: "send at least one field to change: text, context, metadata, tags or state" })
          : Effect.flatMap(Principal, (p) => memories.patch(p, path.space_id, path.memory_id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(Principal, (p) => memories.forget(p, path.space_id, path.memory_id)))
      .handle("history", ({ path }) => Effect.flatMap(Principal, (p) => memories.history(p, path.space_id, path.memory_id)))
      .handle("retrieve", ({ payload }) => Effect.flatMap(Principal, (p) => memories.retrieve(p, payload)))
      .handle("search", ({ payload }) =>
        Effect.flatMap(Principal, (p) => {
          const type = payload.filters?.type
          return memories.retrieve(p, {
            space_id: payload.space_id,
            query: payload.query,
            limit: payload.limit ?? 10,
            ...(type === undefined ? {} : { memory_type: typeof type === "string" ? [type] : type }),
            ...(payload.filters?.user_id === undefined ? {} : { user_id: payload.filters.user_id }),
            ...(payload.filters?.agent_id === undefined ? {} : { agent_id: payload.filters.agent_id }),
            ...(payload.filters?.session_id === undefined ? {} : { session_id: payload.filters.session_id })
          }).pipe(Effect.map((response) => ({
            results: response.results.map((r) => ({
              memory_id: r.memory_id,
              content: r.content,
              relevance_score: Math.min(1, Math.max(0, r.relevance_score ?? 0)),
              memory_type: r.memory_type,
              metadata: r.metadata,
              created_at: r.created_at
            })),
            usage: response.usage
          })))
        }))
      .handle("receipt", ({ path }) => Effect.flatMap(Principal, (p) => memories.receipt(p, path.request_id)))
      .handle("explain", ({ path, urlParams }) =>
        Effect.flatMap(Principal, (p) =>
          memories.receipt(p, path.request_id).pipe(Effect.map((receipt) => explain(receipt, urlParams.memory_id)))))))
