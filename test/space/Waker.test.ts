/**
 * Queued work is found in the store, not in a message: a job written
 * straight into the tables, with no Wake sent, is drained by the space the
 * cluster's waker wakes; a payload that does not decode fails its item alone.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const write = (content: string) => ({
  content,
  documentId: null,
  eventTime: "2024-05-01T10:00:00.000Z",
  userId: null,
  agentId: null,
  sessionId: null,
  memberId: null,
  metadata: {},
  tags: [],
  context: ""
})

eachProfile("the waker", (it) => {
  it.effect("drains a job found in the store that nobody announced; an unreadable payload fails its item alone", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `woken-${Date.now()}`
      expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
      const sql = yield* SqlClient.SqlClient
      const jobId = `job_unannounced${Date.now()}`
      yield* sql`INSERT INTO ingest_jobs (job_id, org_id, space_id, created_at, updated_at)
        VALUES (${jobId}, ${owner.orgId}, ${spaceId}, now(), now())`
      const items = [
        write("Quentin tends the rooftop beehives."),
        { content: 42, surprise: true },
        write("Quentin sells honey on Saturdays.")
      ]
      yield* sql`INSERT INTO ingest_items ${
        sql.insert(items.map((request, position) => ({ job_id: jobId, position, status: "queued", request: JSON.stringify(request) })))
      }`

      let job: any
      for (let waited = 0; waited < 20_000; waited += 200) {
        job = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })).body
        if (job.items.queued === 0) break
        yield* Effect.sleep("200 millis")
      }
      expect(job.items).toEqual({ total: 3, queued: 0, completed: 2, failed: 1, cancelled: 0 })
      expect(job.error).toContain("could not be read")
      const found = yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "Quentin honey beehives" } })
      expect(found.body.results.map((r: any) => r.content).sort()).toEqual([
        "Quentin sells honey on Saturdays.",
        "Quentin tends the rooftop beehives."
      ])
    }), { timeout: 60_000 })
})
