/** The Cache on Redis (ioredis). Unreachable at start-up stops the service; later outages fail requests loudly. */
import { Clock, Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Redis } from "ioredis"
import { describeUrl } from "../UrlRedaction.ts"
import { Cache, CacheUnavailable, type CacheShape } from "./Cache.ts"

const PREFIX = "engram:"

/** decideWindow (Cache.ts) in one atomic step: KEYS current and previous window; ARGV now, window ms, limit. */
const SLIDING_WINDOW = `
local current = tonumber(redis.call("GET", KEYS[1]) or "0")
local previous = tonumber(redis.call("GET", KEYS[2]) or "0")
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local into = (now % window) / window
local count = previous * (1 - into) + current
if count + 1 <= limit then
  redis.call("INCR", KEYS[1])
  redis.call("PEXPIRE", KEYS[1], window * 2)
  return {1, math.floor(limit - count - 1), 0}
end
local wait
if current + 1 <= limit and previous > 0 then
  wait = (1 - (limit - 1 - current) / previous - into) * window
else
  wait = window - (now % window)
end
return {0, 0, math.max(1, math.ceil(wait))}
`

const WindowReply = Schema.Tuple(Schema.Literal(0, 1), Schema.Number, Schema.Number)

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
      slidingWindow: (key, limit, window) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const windowMs = Math.max(1, Duration.toMillis(window))
          const index = Math.floor(now / windowMs)
          return attempt("EVAL", () =>
            client.eval(SLIDING_WINDOW, 2, `${PREFIX}${key}:${index}`, `${PREFIX}${key}:${index - 1}`, now, windowMs, limit)
          ).pipe(
            Effect.flatMap((reply) => Schema.decodeUnknown(WindowReply)(reply)),
            Effect.map(([allowed, remaining, retryAfterMs]) => ({ allowed: allowed === 1, remaining: Math.max(0, remaining), retryAfterMs })),
            Effect.catchTag("ParseError", (e) => Effect.fail(new CacheUnavailable({ message: `Redis EVAL answered unexpectedly: ${e.message}` })))
          )
        }),
      ping: attempt("PING", () => client.ping()).pipe(Effect.asVoid)
    }
    return cache
  })

export const layerRedis = (url: Redacted.Redacted) => Layer.scoped(Cache, makeRedis(url))
