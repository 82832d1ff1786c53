/** Memory-injection figures per organization, space and hour (`injection_usage`). */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const Figures = { injections: Int8, block_tokens: Int8, cache_prefix_tokens: Int8 }
const decodeBuckets = decodeRows(Schema.Struct({ bucket: Timestamptz, ...Figures }))
const decodeSpaces = decodeRows(Schema.Struct({ space_id: Schema.String, ...Figures }))

export class InjectionRepo extends Effect.Service<InjectionRepo>()("engram/store/InjectionRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      /** One block rendered into a prompt, added to its hour. */
      add: (entry: { orgId: string; spaceId: string; at: Date; blockTokens: number; cachePrefixTokens: number }) =>
        sql`INSERT INTO injection_usage (org_id, space_id, bucket, injections, block_tokens, cache_prefix_tokens)
          VALUES (${entry.orgId}, ${entry.spaceId}, date_trunc('hour', ${entry.at}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
            1, ${entry.blockTokens}, ${entry.cachePrefixTokens})
          ON CONFLICT (org_id, space_id, bucket) DO UPDATE SET
            injections = injection_usage.injections + 1,
            block_tokens = injection_usage.block_tokens + EXCLUDED.block_tokens,
            cache_prefix_tokens = injection_usage.cache_prefix_tokens + EXCLUDED.cache_prefix_tokens`.pipe(Effect.asVoid, storeFailure),

      /** Per hour or day over the hours that start in [from, to). */
      series: (orgId: string, from: Date, to: Date, bucket: "hour" | "day") =>
        sql`SELECT date_trunc(${bucket}, bucket AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS bucket,
            sum(injections) AS injections, sum(block_tokens) AS block_tokens, sum(cache_prefix_tokens) AS cache_prefix_tokens
          FROM injection_usage WHERE org_id = ${orgId}
            AND bucket >= date_trunc('hour', ${from}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AND bucket < ${to}
          GROUP BY 1 ORDER BY 1`.pipe(Effect.flatMap(decodeBuckets), storeFailure),

      /** Per space over the hours that start in [from, to). */
      bySpace: (orgId: string, from: Date, to: Date) =>
        sql`SELECT space_id, sum(injections) AS injections, sum(block_tokens) AS block_tokens,
            sum(cache_prefix_tokens) AS cache_prefix_tokens
          FROM injection_usage WHERE org_id = ${orgId}
            AND bucket >= date_trunc('hour', ${from}::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AND bucket < ${to}
          GROUP BY space_id ORDER BY space_id`.pipe(Effect.flatMap(decodeSpaces), storeFailure)
    }
  })
}) {}
