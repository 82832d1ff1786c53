/**
 * A stream of single queued writes, as the proxy and agents send them: every
 * write is stored, and the space's entity holds one keep-alive through the
 * stream instead of one per loop per write (each is a persisted cluster
 * message: a row written, answered and marked processed).
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { call, createKey, signup, waitForJob } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const Count = Schema.Array(Schema.Struct({ n: Schema.NumberFromString }))

eachProfile("a stream of single writes", (it) => {
  it.effect("is stored whole while the space sends a handful of keep-alives, not several per write", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `stream-${Date.now()}`
      const jobs: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const reply = yield* call("POST", "/v1/record", {
          token: key,
          json: { space_id: spaceId, async: true, content: `Priya: on day ${i} I repaired bicycle number ${i} at the Lisbon workshop.` }
        })
        expect(reply.status).toBe(202)
        jobs.push(reply.body.job_id)
      }
      // Up to 30 s for each job, as before this used the shared helper.
      for (const job of jobs) expect((yield* waitForJob(key, spaceId, job, 600)).status).toBe("completed")
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=100`, { token: key })
      expect(listed.body.items.filter((m: any) => m.type === "fact")).toHaveLength(20)

      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT count(*)::text AS n FROM cluster_messages
        WHERE entity_type = 'Space' AND entity_id = ${`${owner.orgId}/${spaceId}`} AND tag = 'Cluster/Entity/keepAlive'`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Count))
      )
      // Each of the space's loops sent its own before: about three per write (60 here). Now one per burst of
      // work, a new one only after a second without any.
      expect(rows[0]!.n).toBeGreaterThan(0)
      expect(rows[0]!.n).toBeLessThanOrEqual(5)
    }))
})
