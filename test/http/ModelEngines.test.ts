/**
 * The space's loops with a catalog model as their engine: CONSOLIDATION_MODEL
 * writes notes, the space's reason model writes memory models. The model is a
 * stand-in OpenAI-compatible server inside the test (the one boundary we
 * cannot reach) that records what it is sent. A failing model is retried,
 * reported and never replaced by the offline engine; an answer cut off at
 * max_tokens is never written.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { modelsOn } from "../../layers/Models.ts"
import * as Catalogs from "../../services/llm/Catalog.ts"
import { REFRESH_ATTEMPTS } from "../../src/space/RefreshLoop.ts"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { profiles, serverSkipReason } from "../support/Profiles.ts"
import { testNode } from "../support/TestNode.ts"

interface Sent {
  readonly system: string
  readonly user: string
  readonly body: any
}
const sent: Array<Sent> = []

const standIn = createServer((req, res) => {
  let raw = ""
  req.on("data", (chunk) => (raw += chunk))
  req.on("end", () => {
    const body = JSON.parse(raw || "{}")
    const messages: Array<{ role: string; content: string }> = body.messages ?? []
    const system = messages.find((m) => m.role === "system")?.content ?? ""
    const user = [...messages].reverse().find((m) => m.role === "user")?.content ?? ""
    sent.push({ system, user, body })
    const answer = (content: string, finish = "stop") =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
        id: `chatcmpl-${sent.length}`,
        object: "chat.completion",
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }],
        usage: { prompt_tokens: 300, completion_tokens: 40, total_tokens: 340 }
      }))
    if (`${system}\n${user}`.includes("unreachable")) {
      res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "overloaded" } }))
      return
    }
    if (system.startsWith("You consolidate related facts")) {
      // The note: its facts' texts, without their dates, joined; marked so a test can tell it from the offline engine's.
      const texts = user.split("\n").map((l) => l.replace(/^- \([^)]*\) /, "").trim()).filter((l) => l !== "")
      return answer(JSON.stringify({ text: `[stand-in] ${texts.join(" ")}` }))
    }
    if (user.includes("overflow")) return answer("## Partial\n- this answer goes on and on and", "length")
    answer(`## ${user}\n[stand-in] ${system.split("\n").filter((l) => /^\d+\. \(\d{4}-\d{2}-\d{2}\) /.test(l)).length} memories read.`)
  })
})
await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve))
afterAll(() => new Promise<void>((resolve) => standIn.close(() => resolve())))

const catalog = Catalogs.layerStatic({
  models: [{
    id: "test/writer-1",
    provider: "openai",
    base_url: `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`,
    upstream_model: "writer-1",
    short_name: "writer",
    credits_per_1k_input: 1,
    credits_per_1k_output: 2,
    requests_per_minute: 1000,
    aliases: ["balanced"],
    timeout_seconds: 10,
    max_retries: 0
  }]
})

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `engines-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  expect((yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })).status).toBe(201)
  const record = (content: string, timestamp: string) =>
    call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content, timestamp } }).pipe(
      Effect.tap((r) => expect(r.status, r.text).toBe(200)),
      Effect.map((r) => r.body.memories.map((m: any) => m.memory_id as string))
    )
  const status = call("GET", `/v1/spaces/${spaceId}/consolidation`, { token: key }).pipe(Effect.map((r) => r.body))
  const notes = call("GET", `/v1/spaces/${spaceId}/memories?type=note&prefer_observations=false`, { token: key }).pipe(
    Effect.map((r) => r.body.items as Array<any>)
  )
  const finished = (jobId: string) =>
    Effect.gen(function*() {
      for (let waited = 0; waited < 60_000; waited += 100) {
        const job = (yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })).body
        if (job.status !== "queued" && job.status !== "processing") return job
        yield* Effect.sleep("100 millis")
      }
      return yield* Effect.dieMessage(`job ${jobId} did not finish`)
    })
  /** The space's ledger totals per operation (from the organization's breakdown). */
  const charged = call("GET", "/v1/usage/breakdown", { token: owner.token }).pipe(
    Effect.map((r) => (r.body.spaces.find((s: { space_id: string }) => s.space_id === spaceId)?.operations ?? {}) as Record<string, number>)
  )
  return { key, spaceId, record, status, notes, finished, charged }
})

const calls = (marker: string, kind: "consolidate" | "refresh") =>
  sent.filter((s) =>
    (kind === "consolidate" ? s.system.startsWith("You consolidate related facts") : s.system.startsWith("You maintain")) &&
    `${s.system}\n${s.user}`.includes(marker)
  )

for (const profile of profiles) {
  layer(testNode(profile.infrastructure(modelsOn(catalog)), { consolidationModel: Option.some("writer") }), {
    excludeTestServices: true,
    timeout: Duration.minutes(2)
  })(`catalog models as the loops' engine [${profile.name}]`, (it) => {
    it.effect("CONSOLIDATION_MODEL writes the note from the group's dated facts; the run names the model", () =>
      Effect.gen(function*() {
        const { notes, record, status } = yield* setup
        const marker = `kiln${Date.now()}`
        const [a] = yield* record(`Zara: I signed up for a pottery class at the ${marker} studio on Mondays.`, "2024-03-04T18:00:00Z")
        const [b] = yield* record(`Zara: My pottery teacher at the ${marker} studio says my bowls are getting better.`, "2024-04-15T18:00:00Z")
        for (let waited = 0; waited < 30_000 && (yield* status).runs.length === 0; waited += 200) yield* Effect.sleep("200 millis")
        const now = yield* status
        expect(now).toMatchObject({ engine: "test/writer-1", pending_facts: 0 })
        expect(now.runs[0]).toMatchObject({ engine: "test/writer-1", observations_created: 1, error_message: null })

        const [note] = yield* notes
        expect([...note.source_ids].sort()).toEqual([a, b].sort())
        expect(note.text.startsWith("[stand-in] ")).toBe(true)
        const [request] = calls(marker, "consolidate")
        expect(request!.body.model).toBe("writer-1")
        expect(request!.body.response_format).toEqual({ type: "json_object" })
        expect(request!.system).toContain("Subject: Zara.")
        expect(request!.user).toMatch(/^- \(4 March 2024\) .*pottery class/m)
        expect(request!.user).toMatch(/^- \(15 April 2024\) .*bowls are getting better/m)
      }))

    it.effect("a consolidation model that fails is retried and reported; its facts stay pending, never noted offline", () =>
      Effect.gen(function*() {
        const { notes, record, status } = yield* setup
        yield* record("Omar: My unreachable greyhound Biscuit loves the beach at dawn.", "2024-02-05T10:00:00Z")
        yield* record("Omar: My unreachable greyhound Biscuit won a ribbon at the dog show.", "2024-03-05T10:00:00Z")
        for (let waited = 0; waited < 30_000 && (yield* status).runs.length < 2; waited += 200) yield* Effect.sleep("200 millis")
        const now = yield* status
        expect(now.runs.length).toBeGreaterThanOrEqual(2)
        for (const run of now.runs) {
          expect(run).toMatchObject({ engine: "test/writer-1", observations_created: 0 })
          expect(run.error_message).toContain("test/writer-1")
        }
        expect(now.pending_facts).toBe(2)
        expect(yield* notes).toEqual([])
        expect(calls("unreachable greyhound", "consolidate").length).toBeGreaterThanOrEqual(2)
      }))

    it.effect("the space's reason model writes a memory model from the recalled memories, asked for its standing query", () =>
      Effect.gen(function*() {
        const { charged, finished, key, record, spaceId } = yield* setup
        const marker = `sourdough${Date.now()}`
        yield* record(`Ines: I bake ${marker} bread every Saturday morning.`, "2024-05-04T08:00:00Z")
        yield* record(`Ines: My ${marker} starter is called Clint.`, "2024-05-11T08:00:00Z")
        const query = `What does Ines bake, and what is her ${marker} starter called?`
        const created = yield* call("POST", `/v1/spaces/${spaceId}/models`, {
          token: key,
          json: { name: "Baking", query, model_id: "baking", max_tokens: 600 }
        })
        expect((yield* finished(created.body.job_id)).status).toBe("completed")
        const model = (yield* call("GET", `/v1/spaces/${spaceId}/models/baking`, { token: key })).body
        const [request] = calls(marker, "refresh")
        expect(request!.body.model).toBe("writer-1")
        expect(request!.user).toBe(query)
        expect(request!.body.max_tokens).toBe(600)
        expect(request!.system).toContain("You maintain \"Baking\"")
        expect(request!.system).toMatch(new RegExp(`^\\d\\. \\(2024-05-04\\) .*bakes ${marker} bread every Saturday`, "m"))
        expect(request!.system).toMatch(/^\d\. \(2024-05-11\) .*starter is called Clint/m)
        expect(model.content).toBe(`## ${query}\n[stand-in] 2 memories read.`)
        expect(model.is_stale).toBe(false)
        // Billed like reason, with the content: one insight and the model's tokens.
        const operations = yield* charged
        expect(operations.insight).toBe(1)
        expect(operations.model_tokens).toBeGreaterThan(0)
      }))

    it.effect("an answer cut off at max_tokens or a failing model fails the job after the retries; content is never partial", () =>
      Effect.gen(function*() {
        const { charged, finished, key, record, spaceId } = yield* setup
        yield* record("Hugo: I cook lentil soup for the neighbours.", "2024-05-04T08:00:00Z")
        const models = `/v1/spaces/${spaceId}/models` as const
        const overflow = yield* call("POST", models, { token: key, json: { name: "Soup", query: `What soup overflow does Hugo cook in ${spaceId}?`, model_id: "soup" } })
        const job = yield* finished(overflow.body.job_id)
        expect(job.status).toBe("failed")
        expect(job.error).toContain("max_tokens")
        expect(calls(`soup overflow does Hugo cook in ${spaceId}`, "refresh")).toHaveLength(REFRESH_ATTEMPTS)
        const model = (yield* callRaw("GET", `${models}/soup`, { token: key })).body
        expect(model.content).toBeNull()
        expect(model.last_refreshed_at).toBeNull()

        // A model with content keeps it, and its history, when a refresh fails.
        const fine = yield* call("POST", models, { token: key, json: { name: "Cooking", query: "What does Hugo cook?", model_id: "cooking" } })
        yield* finished(fine.body.job_id)
        const before = (yield* callRaw("GET", `${models}/cooking`, { token: key })).body
        expect(before.content).not.toBeNull()
        yield* callRaw("PATCH", `${models}/cooking`, { token: key, json: { query: "What does Hugo cook when unreachable?" } })
        const refresh = yield* callRaw("POST", `${models}/cooking/refresh`, { token: key })
        const failed = yield* finished(refresh.body.job_id)
        expect(failed.status).toBe("failed")
        expect(failed.error).toContain(`after ${REFRESH_ATTEMPTS} attempts`)
        const after = (yield* callRaw("GET", `${models}/cooking`, { token: key })).body
        expect(after.content).toBe(before.content)
        expect(after.last_refreshed_at).toBe(before.last_refreshed_at)
        expect((yield* callRaw("GET", `${models}/cooking/history`, { token: key })).body.total).toBe(0)
        // Only the refresh that was written is charged: the cut-off and failed attempts are not.
        expect((yield* charged).insight).toBe(1)
      }))
  })
}

const skipped = serverSkipReason
if (skipped !== undefined) {
  describe("catalog models as the loops' engine [server profile]", () => {
    it.skip(skipped, () => {})
  })
}
