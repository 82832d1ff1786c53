/** Redis when REDIS_URL is set (required for more than one node), otherwise in-process; in every profile. */
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"
import { layerMemory } from "../services/cache/Cache.ts"
import { describeUrl } from "../services/UrlRedaction.ts"
import { StartupError } from "./StartupError.ts"

export const Cache = Layer.unwrapEffect(
  Effect.map(AppConfig, ({ redisUrl }) =>
    Option.match(redisUrl, {
      onNone: () => layerMemory,
      // ioredis is loaded only when Redis is configured.
      onSome: (url) =>
        Layer.unwrapEffect(Effect.map(Effect.promise(() => import("../services/cache/RedisCache.ts")), (redis) => redis.layerRedis(url))).pipe(
          Layer.mapError((e) => new StartupError({ message: e.message }))
        )
    }))
)

export const describeCache = Effect.map(AppConfig, ({ redisUrl }) =>
  Option.match(redisUrl, {
    onNone: () => "in-process (set REDIS_URL to run more than one node)",
    onSome: (url) => `Redis at ${describeUrl(Redacted.value(url))}`
  }))
