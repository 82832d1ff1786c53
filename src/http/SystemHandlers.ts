import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { ServiceUnavailable } from "../domain/Errors.ts"
import { SpaceTypes } from "../domain/Spaces.ts"
import { Cache } from "../../services/cache/Cache.ts"

export const SystemHandlers = HttpApiBuilder.group(EngramApi, "system", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* Cache
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Effect.gen(function*() {
          yield* sql`SELECT 1`.pipe(
            Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => "timed out" }),
            Effect.mapError(() => new ServiceUnavailable({ message: "the store is not reachable" }))
          )
          yield* cache.ping.pipe(
            Effect.mapError(() => new ServiceUnavailable({ message: "the cache is not reachable" }))
          )
          return { status: "ready" as const, store: "ok", cache: cache.kind }
        }))
      .handle("spaceTypes", () => Effect.succeed({ items: SpaceTypes }))
  }))
