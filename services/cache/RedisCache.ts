/** The Cache on Redis (ioredis). Unreachable at start-up stops the service; later outages fail requests loudly. */
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { describeUrl } from "../UrlRedaction.ts"
import { Cache, CacheUnavailable, type CacheShape } from "./Cache.ts"

const PREFIX = "engram:"

const attempt = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (cause) => new CacheUnavailable({ message: `Redis ${what} failed: ${String((cause as Error)?.message ?? cause)}`, cause })
  })

export const makeRedis = (url: Redacted.Redacted) =>
  Effect.gen(function*() {
    const where = describeUrl(Redacted.value(url))
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new Redis(Redacted.value(url), {
            lazyConnect: true,
            enableOfflineQueue: false,
            maxRetriesPerRequest: 1,
            connectTimeout: 5_000,
            retryStrategy: (times) => Math.min(times * 200, 2_000)
          })
          client.on("error", () => {}) // surfaced per command as CacheUnavailable
          try {
            await client.connect()
            await client.ping()
          } catch (error) {
            client.disconnect()
            throw error
          }
          return client
        },
        catch: (cause) =>
          new CacheUnavailable({
            message: `cannot reach Redis at ${where} (REDIS_URL): ${String((cause as Error)?.message ?? cause)}`,
            cause
          })
      }),
      (client) => Effect.promise(() => client.quit().catch(() => client.disconnect()))
    )
    const cache: CacheShape = {
      kind: "redis",
      get: (key) => attempt("GET", () => client.get(PREFIX + key)).pipe(Effect.map(Option.fromNullable)),
      set: (key, value, ttl) =>
        attempt("SET", () => client.set(PREFIX + key, value, "PX", Math.max(1, Duration.toMillis(ttl)))).pipe(Effect.asVoid),
      delete: (key) => attempt("DEL", () => client.del(PREFIX + key)).pipe(Effect.asVoid),
      increment: (key, window) =>
        attempt("INCR", async () => {
          const [[, count]] = (await client.multi()
            .incr(PREFIX + key)
            .pexpire(PREFIX + key, Math.max(1, Duration.toMillis(window)), "NX")
            .exec()) as Array<[Error | null, number]>
          return count
        }),
      ping: attempt("PING", () => client.ping()).pipe(Effect.asVoid)
    }
    return cache
  })

export const layerRedis = (url: Redacted.Redacted) => Layer.scoped(Cache, makeRedis(url))
