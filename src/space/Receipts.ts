/**
 * Context receipts: what one retrieve included and excluded, and why. Stored
 * in the Cache for an hour under the organization and the request id; best effort, so failing to
 * save one never changes the retrieve.
 */
import { Duration, Effect, Option, Schema } from "effect"
import { Receipt } from "../domain/Memories.ts"
import type { Exclusion } from "../domain/SpaceProtocol.ts"
import { Cache } from "../../services/cache/Cache.ts"

export const RECEIPT_TTL = Duration.hours(1)
export const MAX_PER_REASON = 50
const REASON_ORDER = ["dedup", "min_score", "limit", "budget", "candidate_cap", "rerank_rank", "engine_budget"] as const

/** What the cache keeps under a request id; read back through the same schema (a value that does not decode is not a receipt). */
const Stored = Schema.parseJson(Schema.Struct({ org_id: Schema.String, receipt: Receipt }))
const encodeStored = Schema.encodeSync(Stored)
const decodeStored = Schema.decodeUnknownOption(Stored)

/** At most 50 entries per reason, in the documented order; the overflow counted in excluded_truncated. */
export const capExclusions = (excluded: ReadonlyArray<Exclusion>) => {
  const kept: Array<Exclusion> = []
  const truncated: Record<string, number> = {}
  for (const reason of REASON_ORDER) {
    const group = excluded.filter((e) => e.reason === reason)
    kept.push(...group.slice(0, MAX_PER_REASON))
    if (group.length > MAX_PER_REASON) truncated[reason] = group.length - MAX_PER_REASON
  }
  return { excluded: kept, excluded_truncated: truncated }
}

export class Receipts extends Effect.Service<Receipts>()("engram/space/Receipts", {
  effect: Effect.gen(function*() {
    const cache = yield* Cache
    // Under the organization as well as the request id: a request id is the client's to choose (X-Request-ID),
    // so another organization reusing one must not replace this organization's receipt.
    const key = (orgId: string, requestId: string) => `receipt:${orgId}:${requestId}`
    return {
      save: (orgId: string, receipt: Receipt) =>
        cache.set(key(orgId, receipt.request_id), encodeStored({ org_id: orgId, receipt }), RECEIPT_TTL).pipe(
          Effect.catchAll((error) => Effect.logWarning("receipt not saved", error.message)),
          Effect.withSpan("Receipts.save")
        ),
      /** The receipt if it exists and belongs to the caller's organization. */
      find: (orgId: string, requestId: string) =>
        cache.get(key(orgId, requestId)).pipe(
          Effect.map(Option.flatMap((raw) =>
            Option.flatMap(decodeStored(raw), (stored) => (stored.org_id === orgId ? Option.some(stored.receipt) : Option.none()))
          ))
        )
    }
  })
}) {}
