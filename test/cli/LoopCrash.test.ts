/**
 * The space's loops survive a crash: SIGKILL the server while a consolidation
 * run and a memory-model refresh are both waiting on their model, start it
 * again, and find each finished exactly once: one note over the facts, the
 * refresh job completed with its content written once, nothing lost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { signupWithKey, startServer, withDataDir } from "../support/Process.ts"

const json = async (response: Response) => (await response.json()) as any
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A stand-in OpenAI-compatible model that holds every request while `holding`, and answers at once otherwise. */
let holding = true
const held: Array<{ kind: string; res: ServerResponse }> = []
const answered: Array<string> = []
let standIn: Server

const kindOf = (system: string) => (system.startsWith("You consolidate related facts") ? "consolidate" : "refresh")

const reply = (res: ServerResponse, model: string, content: string) =>
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }
  }))

const handle = (req: IncomingMessage, res: ServerResponse) => {
  let raw = ""
  req.on("data", (chunk) => (raw += chunk))
  req.on("end", () => {
    const body = JSON.parse(raw || "{}")
    const system: string = body.messages?.find((m: any) => m.role === "system")?.content ?? ""
    const kind = kindOf(system)
    if (holding) {
      held.push({ kind, res })
      return
    }
    answered.push(kind)
    reply(res, body.model, kind === "consolidate" ? JSON.stringify({ text: "Zara takes a pottery class at the Riverside studio, and her bowls are improving." }) : "## Pottery\n- Zara takes a pottery class.")
  })
}

beforeAll(async () => {
  standIn = createServer(handle)
  await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve))
})
afterAll(() =>
  new Promise<void>((resolve) => {
    standIn.closeAllConnections()
    standIn.close(() => resolve())
  }))

describe("the space's loops survive a crash", () => {
  it("a consolidation run and a model refresh cut off by SIGKILL each finish exactly once after the restart", async () => {
    await withDataDir(async (dataDir) => {
      const catalog = join(dataDir, "models.json")
      writeFileSync(catalog, JSON.stringify({
        models: [{
          id: "test/slow-1",
          provider: "openai",
          base_url: `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`,
          short_name: "slow",
          credits_per_1k_input: 1,
          credits_per_1k_output: 2,
          aliases: ["balanced"],
          timeout_seconds: 120,
          max_retries: 0
        }]
      }))
      const env = { DATA_DIR: dataDir, MODELS_CONFIG: catalog, CONSOLIDATION_MODEL: "slow", CONSOLIDATION_DELAY_SECONDS: "1" }
      let server = await startServer(env)
      const call = (method: string, path: string, body?: unknown, token?: string) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      const key = await signupWithKey(server.url, "loops@example.test")
      const facts: Array<string> = []
      for (const [content, timestamp] of [
        ["Zara: I signed up for a pottery class at the Riverside studio on Mondays.", "2024-03-04T18:00:00Z"],
        ["Zara: My pottery teacher at the Riverside studio says my bowls are getting better.", "2024-04-15T18:00:00Z"]
      ]) {
        const r = await call("POST", "/v1/record", { space_id: "hive", content, timestamp }, key)
        expect(r.status).toBe(200)
        facts.push(...(await json(r)).memories.map((m: any) => m.memory_id))
      }
      const created = await json(await call("POST", "/v1/spaces/hive/models", { name: "Pottery", query: "What does Zara make at the studio?", model_id: "pottery" }, key))

      // Both loops are waiting on the model when the server dies.
      for (let i = 0; i < 300 && !(held.some((h) => h.kind === "consolidate") && held.some((h) => h.kind === "refresh")); i++) await sleep(100)
      expect(held.map((h) => h.kind).sort()).toEqual(["consolidate", "refresh"])
      server.child.kill("SIGKILL")
      await new Promise((r) => server.child.once("exit", r))
      for (const h of held.splice(0)) h.res.destroy()
      holding = false

      server = await startServer(env)
      try {
        let job: any
        let status: any
        for (let i = 0; i < 600; i++) {
          job = await json(await call("GET", `/v1/spaces/hive/jobs/${created.job_id}`, undefined, key))
          status = await json(await call("GET", "/v1/spaces/hive/consolidation", undefined, key))
          if (job.status === "completed" && status.pending_facts === 0) break
          await sleep(100)
        }
        expect(job.status).toBe("completed")
        expect(job.items).toMatchObject({ total: 1, completed: 1, queued: 0 })
        expect(status.pending_facts).toBe(0)
        expect(status.runs.filter((r: any) => r.error_message === null).map((r: any) => r.observations_created)).toEqual([1])

        const notes = (await json(await call("GET", "/v1/spaces/hive/memories?type=note&prefer_observations=false", undefined, key))).items
        expect(notes).toHaveLength(1)
        expect([...notes[0].source_ids].sort()).toEqual([...facts].sort())
        expect(notes[0].text).toBe("Zara takes a pottery class at the Riverside studio, and her bowls are improving.")

        const model = await json(await call("GET", "/v1/spaces/hive/models/pottery", undefined, key))
        expect(model.content).toBe("## Pottery\n- Zara takes a pottery class.")
        expect((await json(await call("GET", "/v1/spaces/hive/models/pottery/history", undefined, key))).total).toBe(0)
        expect(answered.sort()).toEqual(["consolidate", "refresh"])
      } finally {
        await server.stop()
      }
    })
  }, 240_000)
})
