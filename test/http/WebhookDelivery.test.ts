/**
 * Webhook deliveries to a real HTTPS receiver (self-signed certificate,
 * trusted by the node's transport): memory.created for each stored item,
 * signed over the raw bytes with the webhook's secret; retries on the
 * schedule (here shortened) through 500s and a receiver that hangs past the
 * 10 s timeout, with the same operation_id and the same bytes every time;
 * `failed` once the attempts run out; no redirect followed; a deleted
 * webhook's queued deliveries stop; edits apply at once; memory.consolidated
 * after a consolidation run; the deliveries list pages newest first.
 */
import { expect } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { type Answer, certificate, type Receiver, signedBy, startReceiver } from "../support/Receiver.ts"
import { eachProfile } from "../support/Suite.ts"

const transport = WebhookTransport.make({ allowPrivate: true, ca: certificate().cert })

const receiver = (script?: (n: number) => Answer | undefined) =>
  Effect.acquireRelease(Effect.promise(() => startReceiver(script)), (r) => Effect.promise(() => r.close()))

const setup = (options: { readonly consolidation?: boolean } = {}) =>
  Effect.gen(function*() {
    const owner = yield* signup()
    const key = (yield* createKey(owner.token)).raw_key
    const spaceId = `deliver-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
    expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
    const hooks = `/v1/spaces/${spaceId}/webhooks` as const
    const hook = (r: Receiver, extra: Record<string, unknown> = {}) =>
      call("POST", hooks, { token: key, json: { url: r.url, ...extra } }).pipe(
        Effect.tap((reply) => expect(reply.status, reply.text).toBe(201)),
        Effect.map((reply) => reply.body as { id: string; secret: string })
      )
    const record = (content: string, extra: Record<string, unknown> = {}) =>
      call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, ...extra } }).pipe(
        Effect.tap((reply) => expect(reply.status, reply.text).toBe(200))
      )
    const deliveries = (id: string, query = "") =>
      callRaw("GET", `${hooks}/${id}/deliveries${query}`, { token: key }).pipe(
        Effect.tap((reply) => expect(reply.status, reply.text).toBe(200)),
        Effect.map((reply) => reply.body)
      )
    /** Waits (up to `within` ms) until `done` holds of the webhook's deliveries. */
    const until = (id: string, done: (items: Array<any>) => boolean, within = 20_000) =>
      Effect.gen(function*() {
        let items: Array<any> = []
        for (let waited = 0; waited < within; waited += 100) {
          items = (yield* deliveries(id, "?limit=100")).items
          if (done(items)) return items
          yield* Effect.sleep("100 millis")
        }
        return yield* Effect.dieMessage(`deliveries never got there: ${JSON.stringify(items)}`)
      })
    void options
    return { key, spaceId, hooks, hook, record, deliveries, until }
  })

/** Short retries so a whole schedule runs in a test: 6 attempts, 300 ms apart after the first. */
const schedule = [0, 0.3, 0.3, 0.3, 0.3, 0.3].map((s) => Duration.millis(s * 1000))

eachProfile("webhook deliveries", (it) => {
  it.scoped("memory.created reaches the receiver, signed over the raw bytes, with the documented headers and body", () =>
    Effect.gen(function*() {
      const r = yield* receiver()
      const { hook, record, spaceId, until } = yield* setup()
      const { id, secret } = yield* hook(r)
      const written = yield* record("Priya adopted a greyhound named Biscuit.", { document_id: "doc-biscuit", tags: ["pets", "family"] })
      expect(written.status).toBe(200)
      const [delivery] = yield* until(id, (items) => items.length === 1 && items[0].status === "completed")
      expect(delivery).toEqual({
        id: expect.stringMatching(/^dlv_/),
        event_type: "memory.created",
        url: r.url,
        status: "completed",
        attempts: 1,
        response_status: 200,
        error: null,
        next_retry_at: null,
        last_attempt_at: expect.any(String),
        created_at: expect.any(String)
      })
      expect(r.received).toHaveLength(1)
      const got = r.received[0]!
      expect(got.path).toBe("/hook")
      expect(got.headers["content-type"]).toBe("application/json")
      expect(got.headers["x-svc-event"]).toBe("memory.created")
      expect(signedBy(got, secret)).toBe(true)
      expect(signedBy(got, `${secret}x`)).toBe(false)
      expect(got.json).toEqual({
        event: "memory.created",
        space_id: spaceId,
        operation_id: expect.stringMatching(/^op_/),
        status: "completed",
        timestamp: expect.any(String),
        data: { document_id: "doc-biscuit", tags: ["pets", "family"] }
      })
      // No member without a value is sent as null.
      expect(got.raw.toString("utf8")).not.toContain("null")
    }))

  it.scoped("500s and a receiver that hangs past the timeout are retried on schedule with the same operation and bytes, then acknowledged", () =>
    Effect.gen(function*() {
      const answers: Array<Answer> = [500, 503, "hang", 404]
      const r = yield* receiver((n) => answers[n])
      const { hook, record, until } = yield* setup()
      const { id, secret } = yield* hook(r)
      yield* record("Priya's greyhound Biscuit learned to fetch.")
      const [delivery] = yield* until(id, (items) => items[0]?.status === "completed", 40_000)
      expect(delivery).toMatchObject({ status: "completed", attempts: 5, response_status: 200, error: null, next_retry_at: null })
      expect(r.received.map((x) => x.answer)).toEqual([500, 503, "hang", 404, 200])
      const ops = new Set(r.received.map((x) => x.json.operation_id))
      expect(ops.size).toBe(1)
      const bytes = new Set(r.received.map((x) => x.raw.toString("base64")))
      expect(bytes.size).toBe(1)
      for (const x of r.received) expect(signedBy(x, secret)).toBe(true)
      // The hang was cut at 10 s: the next attempt came about 10.3 s after it.
      const afterHang = r.received[3]!.at - r.received[2]!.at
      expect(afterHang).toBeGreaterThanOrEqual(10_000)
      expect(afterHang).toBeLessThan(20_000)
    }), { timeout: 60_000 })

  it.scoped("after the last attempt a delivery is failed with next_retry_at null; while retrying, next_retry_at is set", () =>
    Effect.gen(function*() {
      const r = yield* receiver(() => 500)
      const { hook, record, until } = yield* setup()
      const { id } = yield* hook(r)
      yield* record("Omar repaints his boat every spring.")
      const retrying = yield* until(id, (items) => items[0]?.attempts >= 1 && items[0]?.status === "pending", 10_000)
      expect(retrying[0]).toMatchObject({ status: "pending", response_status: 500, error: "the receiver answered 500" })
      expect(retrying[0].next_retry_at).not.toBeNull()
      const [failed] = yield* until(id, (items) => items[0]?.status === "failed")
      expect(failed).toMatchObject({ status: "failed", attempts: 6, response_status: 500, next_retry_at: null })
      yield* Effect.sleep("1 second")
      expect(r.received).toHaveLength(6)
    }))

  it.scoped("a redirect is not followed: it is a failed attempt, retried at the same URL", () =>
    Effect.gen(function*() {
      const r = yield* receiver((n) => (n === 0 ? 302 : 200))
      const { hook, record, until } = yield* setup()
      const { id } = yield* hook(r)
      yield* record("Omar sails on Lake Geneva.")
      const [delivery] = yield* until(id, (items) => items[0]?.status === "completed")
      expect(delivery.attempts).toBe(2)
      expect(r.received.map((x) => x.answer)).toEqual([302, 200])
      expect(r.received.every((x) => x.path === "/hook")).toBe(true)
    }))

  it.scoped("deleting a webhook stops its queued deliveries; disabling holds them and sends nothing new; edits apply at once", () =>
    Effect.gen(function*() {
      const failing = yield* receiver(() => 500)
      const { hook, hooks, key, record, until } = yield* setup()
      const doomed = yield* hook(failing)
      yield* record("Lena bakes sourdough on Sundays.")
      yield* until(doomed.id, (items) => items[0]?.attempts >= 1)
      expect((yield* callRaw("DELETE", `${hooks}/${doomed.id}`, { token: key })).status).toBe(204)
      const sent = failing.received.length
      yield* Effect.sleep("2 seconds")
      expect(failing.received.length - sent).toBeLessThanOrEqual(1) // at most the attempt already in flight
      const settled = failing.received.length
      yield* Effect.sleep("1 second")
      expect(failing.received.length).toBe(settled)

      const ok = yield* receiver()
      const live = yield* hook(ok)
      const off = yield* callRaw("PATCH", `${hooks}/${live.id}`, { token: key, json: { enabled: false } })
      expect(off.status).toBe(200)
      yield* record("Lena's starter is called Clint.")
      yield* Effect.sleep("1500 millis")
      expect(ok.received).toHaveLength(0)
      expect((yield* callRaw("GET", `${hooks}/${live.id}/deliveries`, { token: key })).body.items).toEqual([])

      // Re-enabled, pointed elsewhere: the next event goes to the new URL at once.
      const other = yield* receiver()
      yield* callRaw("PATCH", `${hooks}/${live.id}`, { token: key, json: { enabled: true, url: other.url } })
      yield* record("Lena entered a bread contest in Ghent.")
      yield* until(live.id, (items) => items.length === 1 && items[0].status === "completed")
      expect(other.received).toHaveLength(1)
      expect(ok.received).toHaveLength(0)
    }))

  it.scoped("memory.consolidated follows a consolidation run that changed notes, with its counts", () =>
    Effect.gen(function*() {
      const r = yield* receiver()
      const { hook, record, until } = yield* setup()
      const { id, secret } = yield* hook(r, { event_types: ["memory.consolidated"] })
      yield* record("Zara: I signed up for a pottery class at the Riverside studio on Mondays.", { timestamp: "2024-03-04T18:00:00Z" })
      yield* record("Zara: My pottery teacher at the Riverside studio says my bowls are getting better.", { timestamp: "2024-04-15T18:00:00Z" })
      const items = yield* until(id, (items) => items.some((d) => d.status === "completed"), 30_000)
      expect(items.every((d) => d.event_type === "memory.consolidated")).toBe(true)
      const event = r.received[0]!
      expect(signedBy(event, secret)).toBe(true)
      expect(event.headers["x-svc-event"]).toBe("memory.consolidated")
      expect(event.json).toMatchObject({ event: "memory.consolidated", status: "completed" })
      const data = event.json.data
      expect(Object.keys(data).sort()).toEqual(["observations_created", "observations_deleted", "observations_updated"])
      expect(data.observations_created + data.observations_updated).toBeGreaterThan(0)
      // Only the subscribed event: no memory.created was sent.
      expect(r.received.every((x) => x.json.event === "memory.consolidated")).toBe(true)
    }))

  it.scoped("deliveries page newest first with next_cursor; a forged cursor is 422", () =>
    Effect.gen(function*() {
      const r = yield* receiver()
      const { deliveries, hook, key, record, spaceId, until } = yield* setup()
      const { id } = yield* hook(r)
      const batch = Array.from({ length: 5 }, (_, i) => ({ content: `Asha planted tree number ${i} in her orchard.`, document_id: `tree-${i}` }))
      const job = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: batch } })
      expect(job.status).toBe(202)
      yield* record("Asha sells apples at the market.", { document_id: "market" })
      const all = yield* until(id, (items) => items.length === 6 && items.every((d) => d.status === "completed"))
      const first = yield* deliveries(id, "?limit=4")
      expect(first.items).toHaveLength(4)
      expect(first.next_cursor).toEqual(expect.any(String))
      const second = yield* deliveries(id, `?limit=4&cursor=${encodeURIComponent(first.next_cursor)}`)
      expect(second.items).toHaveLength(2)
      expect(second.next_cursor).toBeNull()
      const paged = [...first.items, ...second.items].map((d: any) => d.id)
      expect(paged).toEqual(all.map((d: any) => d.id))
      expect(new Set(paged).size).toBe(6)
      const times = [...first.items, ...second.items].map((d: any) => Date.parse(d.created_at))
      expect([...times].sort((a, b) => b - a)).toEqual(times)
      // The single record came last, so it is first.
      expect(r.received.map((x) => x.json.data.document_id).sort()).toEqual(["market", "tree-0", "tree-1", "tree-2", "tree-3", "tree-4"])
      const forged = yield* call("GET", `/v1/spaces/${spaceId}/webhooks/${id}/deliveries?cursor=bm9wZQ`, { token: key })
      expect(forged.status).toBe(422)
      expect(forged.body.error.code).toBe("validation_error")
      const tooMany = yield* call("GET", `/v1/spaces/${spaceId}/webhooks/${id}/deliveries?limit=1000`, { token: key })
      expect(tooMany.status).toBe(422)
    }))

  it.scoped("only stored items send: a cancelled job's items send nothing, and each organization hears only its own spaces", () =>
    Effect.gen(function*() {
      const mine = yield* receiver()
      const theirs = yield* receiver()
      const { hook, key, spaceId, until } = yield* setup()
      const { id } = yield* hook(mine)
      const other = yield* setup()
      const otherHook = yield* other.hook(theirs)

      const ahead = Array.from({ length: 100 }, (_, i) => ({ content: `Lena repaired bicycle number ${i} in her garage in Utrecht.` }))
      const first = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items: ahead } })
      const items = Array.from({ length: 100 }, (_, i) => ({ content: `Nate adopted turtle number ${i} from the shelter in Denver.` }))
      const second = yield* call("POST", "/v1/record/batch", { token: key, json: { space_id: spaceId, items } })
      yield* call("DELETE", `/v1/spaces/${spaceId}/jobs/${second.body.job_id}`, { token: key })
      const jobDone = (jobId: string) =>
        Effect.gen(function*() {
          for (;;) {
            const job = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })).body
            if (job.status !== "queued" && job.status !== "processing") return job
            yield* Effect.sleep("100 millis")
          }
        })
      const a = yield* jobDone(first.body.job_id)
      const b = yield* jobDone(second.body.job_id)
      const stored = a.items.completed + b.items.completed
      expect(b.items.cancelled).toBeGreaterThan(0)
      yield* until(id, (ds) => ds.length === stored && ds.every((d) => d.status === "completed"), 60_000)
      yield* Effect.sleep("1 second")
      expect(mine.received).toHaveLength(stored)
      expect(new Set(mine.received.map((x) => x.json.operation_id)).size).toBe(stored)
      expect(theirs.received).toHaveLength(0)
      expect((yield* other.deliveries(otherHook.id)).items).toEqual([])
    }), { timeout: 120_000 })
}, { webhookRetrySchedule: schedule, consolidationDelay: Duration.seconds(1) }, { transport })
