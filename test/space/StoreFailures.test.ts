/**
 * A space survives its store failing. Failures are injected in the real
 * store with a trigger on `memories`: an outage (SQLSTATE 08006, what a lost
 * connection reports) while a flag is set, and a refusal of any memory whose
 * text says POISON. The queue stalls during the outage, retried with
 * backoff, and drains once the store recovers; a refused item fails alone;
 * recall and the next write never wait on either.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Duration, Effect, Metric } from "effect"
import { loopFailures } from "../../src/space/SupervisedLoop.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const installFaults = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS test_faults (kind text PRIMARY KEY)`
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION test_fault() RETURNS trigger AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM test_faults WHERE kind = 'outage') THEN
        RAISE EXCEPTION 'injected outage' USING ERRCODE = '08006';
      END IF;
      IF NEW.text LIKE '%POISON%' THEN
        RAISE EXCEPTION 'injected refusal';
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql`)
  yield* sql`DROP TRIGGER IF EXISTS test_fault ON memories`
  yield* sql`CREATE TRIGGER test_fault BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION test_fault()`
})

const outage = (on: boolean) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    on ? sql`INSERT INTO test_faults (kind) VALUES ('outage') ON CONFLICT DO NOTHING` : sql`DELETE FROM test_faults`)

const drainFailures = Metric.value(Metric.tagged(loopFailures, "loop", "drain")).pipe(Effect.map((state) => state.count))

/** An answer within `ms`, or the test fails: nothing may hang. */
const within = <A, E, R>(ms: number, effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.timeoutFail({ duration: Duration.millis(ms), onTimeout: () => new Error(`no answer within ${ms} ms`) }))

eachProfile("a space when its store fails", (it) => {
  it.effect("an outage stalls the queue, retried with backoff; it drains once the store recovers, exactly once", () =>
    Effect.gen(function*() {
      yield* installFaults
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `outage-${Date.now()}`
      const record = (content: string) => call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content } })
      expect((yield* record("Ada keeps three hives of bees behind the orchard.")).status).toBe(200)

      const failuresBefore = yield* drainFailures
      yield* outage(true)
      const items = Array.from({ length: 30 }, (_, n) => ({ content: `Visitor ${n} bought a jar of heather honey.`, metadata: { n } }))
      const queued = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } })
      expect(queued.status).toBe(202)
      const job = () => call("GET", `/v1/spaces/${spaceId}/jobs/${queued.body.job_id}`, { token: key }).pipe(Effect.map((r) => r.body))

      // The drain keeps failing, and keeps being retried, while the store is down.
      for (let waited = 0; (yield* drainFailures) < failuresBefore + 2; waited += 100) {
        if (waited > 15_000) return yield* Effect.dieMessage("the drain never retried")
        yield* Effect.sleep("100 millis")
      }
      expect((yield* job()).items.completed).toBe(0)

      // Not wedged: a write answers at once (503), recall still works from the index.
      const during = yield* within(2000, record("Ada sold honey at the market."))
      expect(during.status).toBe(503)
      expect(during.body.error.code).toBe("service_unavailable")
      const recalled = yield* within(2000, call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "bees hives" } }))
      expect(recalled.status).toBe(200)
      expect(recalled.body.results[0].content).toContain("hives")

      yield* outage(false)
      let finished: any
      for (let waited = 0; ; waited += 200) {
        finished = yield* job()
        if (finished.status === "completed" || waited > 40_000) break
        yield* Effect.sleep("200 millis")
      }
      expect(finished).toMatchObject({ status: "completed", items: { total: 30, completed: 30, failed: 0, queued: 0 } })
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=100&q=heather`, { token: key })
      const seen = listed.body.items.map((m: any) => m.metadata.n).sort((a: number, b: number) => a - b)
      expect(seen).toEqual(items.map((_, n) => n))
      expect((yield* within(2000, record("Ada bought a new smoker for the hives."))).status).toBe(200)
    }), { timeout: 90_000 })

  it.effect("an item the store refuses fails alone; the group's others are stored and the next write succeeds at once", () =>
    Effect.gen(function*() {
      yield* installFaults
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `refused-${Date.now()}`
      const items = ["Bruno repairs clocks.", "Bruno's shop is on Rua Augusta.", "POISON pill item.", "Bruno collects barometers.", "Bruno trained in Geneva."]
        .map((content) => ({ content }))
      const queued = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } })
      expect(queued.status).toBe(202)
      let job: any
      for (let waited = 0; ; waited += 100) {
        job = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${queued.body.job_id}`, { token: key })).body
        if (job.items.queued === 0 || waited > 20_000) break
        yield* Effect.sleep("100 millis")
      }
      expect(job.items).toEqual({ total: 5, queued: 0, completed: 4, failed: 1, cancelled: 0 })
      expect(job.error).toContain("refused")
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=100`, { token: key })
      expect(listed.body.items.map((m: any) => m.text).sort()).toEqual(items.filter((i) => !i.content.includes("POISON")).map((i) => i.content).sort())

      const refused = yield* within(2000, call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "POISON again." } }))
      expect(refused.status).toBe(500)
      expect(refused.body.error.code).toBe("internal_error")
      expect(refused.body.error.message).not.toContain("POISON")
      const next = yield* within(2000, call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Bruno opens at nine." } }))
      expect(next.status).toBe(200)
    }), { timeout: 60_000 })
  it.effect("a store failing once mid-pipeline (the second group of a batch): every item is stored exactly once", () =>
    Effect.gen(function*() {
      // A sequence is not rolled back with the transaction that fails: the outage happens once.
      const sql = yield* SqlClient.SqlClient
      yield* sql`DROP SEQUENCE IF EXISTS test_fail_once`
      yield* sql`CREATE SEQUENCE test_fail_once`
      yield* sql.unsafe(`CREATE OR REPLACE FUNCTION test_fail_once() RETURNS trigger AS $$
        BEGIN
          IF NEW.text LIKE '%FAIL_ONCE%' AND nextval('test_fail_once') = 1 THEN
            RAISE EXCEPTION 'injected outage' USING ERRCODE = '08006';
          END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql`)
      yield* sql`DROP TRIGGER IF EXISTS test_fail_once ON memories`
      yield* sql`CREATE TRIGGER test_fail_once BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION test_fail_once()`
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `pipeline-${Date.now()}`
      const failuresBefore = yield* drainFailures
      // Groups of 50: the store of items 50-99 fails once while items 100-119 are being prepared.
      const items = Array.from({ length: 120 }, (_, n) => ({
        content: `Visitor ${n} bought a jar of ${n < 60 ? "heather" : "clover"} honey${n === 75 ? " FAIL_ONCE" : ""}.`,
        metadata: { n }
      }))
      // Two batches of 60, queued back to back (a batch holds at most 100 items).
      const jobIds: Array<string> = []
      for (const half of [items.slice(0, 60), items.slice(60)]) {
        const queued = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: half } })
        expect(queued.status).toBe(202)
        jobIds.push(queued.body.job_id)
      }
      for (const jobId of jobIds) {
        let finished: any
        for (let waited = 0; ; waited += 200) {
          finished = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })).body
          if (finished.status === "completed" || waited > 40_000) break
          yield* Effect.sleep("200 millis")
        }
        expect(finished).toMatchObject({ status: "completed", items: { total: 60, completed: 60, failed: 0, queued: 0 } })
      }
      expect(yield* drainFailures).toBeGreaterThan(failuresBefore)
      const seen: Array<number> = []
      for (const word of ["heather", "clover"]) {
        const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=100&q=${word}`, { token: key })
        seen.push(...listed.body.items.map((m: any) => m.metadata.n))
      }
      expect(seen.sort((a, b) => a - b)).toEqual(items.map((_, n) => n))
      yield* sql`DROP TRIGGER IF EXISTS test_fail_once ON memories`
    }), { timeout: 90_000 })
})
