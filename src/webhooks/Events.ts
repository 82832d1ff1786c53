/**
 * The events a space sends, as the bytes every attempt of their deliveries
 * carries: event, space_id, operation_id, status, timestamp and data, with
 * fields that have no value left out (never null). The operation_id is the
 * same on every attempt, so receivers deduplicate on it.
 */
import type { SpaceRef } from "../domain/Ids.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import type { OutboxEvent } from "../../services/store/WebhookRepo.ts"

export const newOperationId = () => `op_${randomBase62(22)}`

/** A JSON value with every null and undefined member left out, at any depth. */
const withoutEmpty = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutEmpty)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).flatMap(([k, v]) => (v === null || v === undefined ? [] : [[k, withoutEmpty(v)]]))
    )
  }
  return value
}

const event = (
  eventType: string,
  space: SpaceRef,
  status: "completed" | "failed",
  at: Date,
  data: Record<string, unknown>
): OutboxEvent => {
  const operationId = newOperationId()
  const body = JSON.stringify(withoutEmpty({
    event: eventType,
    space_id: space.spaceId,
    operation_id: operationId,
    status,
    timestamp: at.toISOString(),
    data
  }))
  return { eventType, operationId, body }
}

/** An item finished being stored and indexed. */
export const memoryCreated = (space: SpaceRef, item: { readonly documentId: string | null; readonly tags: ReadonlyArray<string> }, at: Date) =>
  event("memory.created", space, "completed", at, { document_id: item.documentId, tags: [...item.tags] })

/** A consolidation run changed notes (status completed), or failed (status failed, with its error). */
export const memoryConsolidated = (
  space: SpaceRef,
  run: { readonly created: number; readonly updated: number; readonly deleted: number; readonly error: string | null },
  at: Date
) =>
  event("memory.consolidated", space, run.error === null ? "completed" : "failed", at, {
    observations_created: run.created,
    observations_updated: run.updated,
    observations_deleted: run.deleted,
    error_message: run.error
  })

/** A rule redacted part of a write, or blocked it (status failed: nothing of it was stored). */
export const policyTriggered = (
  space: SpaceRef,
  finding: {
    readonly action: "redact" | "block" | "flag"
    readonly detector: string
    readonly matchedTypes: ReadonlyArray<string>
    readonly documentId: string | null
    readonly message: string
  },
  at: Date
) =>
  event("security.policy_triggered", space, finding.action === "block" ? "failed" : "completed", at, {
    action: finding.action,
    detector: finding.detector,
    document_id: finding.documentId,
    matched_types: [...finding.matchedTypes],
    message: finding.message
  })
