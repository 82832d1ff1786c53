/**
 * API key lifecycle. Last-used times are gathered in memory and written at most
 * once per 30 seconds (and at shutdown), so authenticating never writes to the store.
 */
import { Clock, Duration, Effect } from "effect"
import type { CreateApiKeyRequest } from "../domain/ApiKeys.ts"
import { NotFound, ServiceUnavailable } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { Cache } from "../../services/cache/Cache.ts"
import { issueApiKey } from "../../services/secrets/Tokens.ts"
import { ApiKeyRepo, toApiKey } from "../../services/store/ApiKeyRepo.ts"

/** How long a node may trust a key row it verified; the revocation marker outlives it. */
export const KEY_CACHE_TTL = Duration.seconds(30)
export const REVOKED_MARKER_TTL = Duration.minutes(10)
export const LAST_USED_FLUSH_DELAY = Duration.seconds(30)
export const revokedMarker = (keyId: string) => `key-revoked:${keyId}`

export class ApiKeys extends Effect.Service<ApiKeys>()("engram/identity/ApiKeys", {
  dependencies: [ApiKeyRepo.Default],
  scoped: Effect.gen(function*() {
    const repo = yield* ApiKeyRepo
    const cache = yield* Cache
    const lastUsed = new Map<string, Date>()
    const evictions = new Set<(keyId: string) => void>()

    const flush = Effect.suspend(() => {
      if (lastUsed.size === 0) return Effect.void
      const batch = [...lastUsed]
      lastUsed.clear()
      return repo.touch(batch)
    }).pipe(Effect.catchAll((error) => Effect.logWarning("could not record key last-used times", error.message)))

    yield* Effect.addFinalizer(() => flush)
    const scope = yield* Effect.scope
    let flushScheduled = false

    /** Records a use; the first use after a flush schedules the next one. */
    const markUsed = (keyId: string, at: Date) =>
      Effect.suspend(() => {
        lastUsed.set(keyId, at)
        if (flushScheduled) return Effect.void
        flushScheduled = true
        return Effect.sleep(LAST_USED_FLUSH_DELAY).pipe(
          Effect.zipRight(Effect.suspend(() => {
            flushScheduled = false
            return flush
          })),
          Effect.withSpan("ApiKeys.flushLastUsed"),
          Effect.forkIn(scope),
          Effect.asVoid
        )
      })

    const create = Effect.fn("ApiKeys.create")(function*(principal: PrincipalShape, request: CreateApiKeyRequest) {
      const now = yield* Clock.currentTimeMillis
      const issued = issueApiKey(request.env)
      const expiresAt = request.expires_in_days === undefined
        ? null
        : new Date(now + Duration.toMillis(Duration.days(request.expires_in_days)))
      const row = yield* repo.create({
        id: issued.id,
        orgId: principal.orgId,
        createdBy: principal.userId,
        name: request.name.trim(),
        env: request.env,
        prefix: issued.prefix,
        hash: issued.hash,
        now: new Date(now),
        expiresAt
      })
      yield* Effect.annotateCurrentSpan({ key_id: issued.id, org_id: principal.orgId })
      return { ...toApiKey(row, now), raw_key: issued.raw }
    })

    const list = Effect.fn("ApiKeys.list")(function*(orgId: string) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* repo.list(orgId)
      return rows.map((row) => {
        const pending = lastUsed.get(row.id)
        const usedAt = pending && (!row.last_used_at || pending > row.last_used_at) ? pending : row.last_used_at
        return toApiKey({ ...row, last_used_at: usedAt }, now)
      })
    })

    /** Immediate on every node: the shared marker is checked before any locally trusted row. */
    const revoke = Effect.fn("ApiKeys.revoke")(function*(orgId: string, keyId: string) {
      const now = yield* Clock.currentTimeMillis
      yield* cache.set(revokedMarker(keyId), "1", REVOKED_MARKER_TTL).pipe(
        Effect.mapError((e) => new ServiceUnavailable({ message: `cannot revoke the key now: ${e.message}` }))
      )
      const revoked = yield* repo.revoke(orgId, keyId, new Date(now))
      if (!revoked) return yield* new NotFound({ message: "no such API key" })
      for (const evict of evictions) evict(keyId)
    })

    return {
      create,
      list,
      revoke,
      markUsed,
      onRevoke: (evict: (keyId: string) => void) => void evictions.add(evict),
      flush
    }
  })
}) {}

