/**
 * Short-lived shared state: what every node must see at once (revoked keys now,
 * rate-limit counters and receipts later). Redis when `REDIS_URL` is set,
 * otherwise an in-process map for a single node.
 */
import { Clock, Context, Data, Duration, Effect, Layer, Option } from "effect"

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
  readonly ping: Effect.Effect<void, CacheUnavailable>
}

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
    ping: Effect.void
  }
})

export const layerMemory = Layer.effect(Cache, makeMemory)
