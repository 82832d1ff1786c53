/**
 * Short-lived shared state: what every node must see at once (revoked keys now,
 * rate-limit counters and receipts later). Redis when `REDIS_URL` is set,
 * otherwise an in-process map for a single node.
 */
import { Clock, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { ServiceUnavailable } from "../../src/domain/Errors.ts"

export class CacheUnavailable extends Data.TaggedError("CacheUnavailable")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface CacheShape {
  readonly kind: "redis" | "memory"
  readonly get: (key: string) => Effect.Effect<Option.Option<string>, CacheUnavailable>
  readonly set: (key: string, value: string, ttl: Duration.DurationInput) => Effect.Effect<void, CacheUnavailable>
  readonly delete: (key: string) => Effect.Effect<void, CacheUnavailable>
  /** Adds one and returns the new count; the window starts with the first increment. */
  readonly increment: (key: string, window: Duration.DurationInput) => Effect.Effect<number, CacheUnavailable>
  /**
   * One request against a sliding-window limit of `limit` per `window`
   * (the current fixed window's count plus the previous one's, weighted by
   * how much of it the sliding window still covers). Counts it if allowed.
   */
  readonly slidingWindow: (key: string, limit: number, window: Duration.DurationInput) => Effect.Effect<WindowDecision, CacheUnavailable>
  readonly ping: Effect.Effect<void, CacheUnavailable>
}

export interface WindowDecision {
  readonly allowed: boolean
  /** Requests left in the window after this one. */
  readonly remaining: number
  /** When refused: how long until one more request would be allowed. */
  readonly retryAfterMs: number
}

/**
 * The sliding-window decision from the two fixed windows' counts (`previous`,
 * `current`) at `now`; Redis runs the same arithmetic in a script.
 */
export const decideWindow = (previous: number, current: number, now: number, windowMs: number, limit: number): WindowDecision => {
  const into = (now % windowMs) / windowMs
  const count = previous * (1 - into) + current
  if (count + 1 <= limit) return { allowed: true, remaining: Math.max(0, Math.floor(limit - count - 1)), retryAfterMs: 0 }
  // Allowed again once the previous window's share has shrunk enough, or (if this window alone is full) after it.
  const wait = current + 1 <= limit && previous > 0
    ? (1 - (limit - 1 - current) / previous - into) * windowMs
    : windowMs - (now % windowMs)
  return { allowed: false, remaining: 0, retryAfterMs: Math.max(1, Math.ceil(wait)) }
}

/** At the service boundary a cache outage is a loud 503, as a store outage is (SqlFailure). */
export const cacheDown = (e: CacheUnavailable) => new ServiceUnavailable({ message: `the cache is unavailable: ${e.message}` })

export class Cache extends Context.Tag("engram/cache/Cache")<Cache, CacheShape>() {}

interface Entry {
  value: string
  expiresAt: number
}

export const makeMemory = Effect.sync((): CacheShape => {
  const entries = new Map<string, Entry>()
  const live = (key: string, now: number) => {
    const entry = entries.get(key)
    if (entry && entry.expiresAt <= now) {
      entries.delete(key)
      return undefined
    }
    return entry
  }
  const sweep = (now: number) => {
    if (entries.size < 10_000) return
    for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key)
  }
  return {
    kind: "memory",
    get: (key) => Clock.currentTimeMillis.pipe(Effect.map((now) => Option.fromNullable(live(key, now)?.value))),
    set: (key, value, ttl) =>
      Clock.currentTimeMillis.pipe(Effect.map((now) => {
        sweep(now)
        entries.set(key, { value, expiresAt: now + Duration.toMillis(ttl) })
      })),
    delete: (key) => Effect.sync(() => void entries.delete(key)),
    increment: (key, window) =>
      Clock.currentTimeMillis.pipe(Effect.map((now) => {
        const entry = live(key, now)
        const count = entry ? Number(entry.value) + 1 : 1
        entries.set(key, { value: String(count), expiresAt: entry?.expiresAt ?? now + Duration.toMillis(window) })
        return count
      })),
    slidingWindow: (key, limit, window) =>
      Clock.currentTimeMillis.pipe(Effect.map((now) => {
        const windowMs = Duration.toMillis(window)
        const index = Math.floor(now / windowMs)
        const count = (i: number) => Number(live(`${key}:${i}`, now)?.value ?? 0)
        const decision = decideWindow(count(index - 1), count(index), now, windowMs, limit)
        if (decision.allowed) {
          sweep(now)
          entries.set(`${key}:${index}`, { value: String(count(index) + 1), expiresAt: (index + 2) * windowMs })
        }
        return decision
      })),
    ping: Effect.void
  }
})

export const layerMemory = Layer.effect(Cache, makeMemory)
