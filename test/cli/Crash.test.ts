/**
 * Durability of queued writes: SIGKILL the server in the middle of a queued
 * batch, start it again, and find every acknowledged item stored exactly once.
 */
import { describe, expect, it } from "vitest"
import { signupWithKey, startServer, withDataDir } from "../support/Process.ts"

const json = async (response: Response) => (await response.json()) as any

describe("queued writes survive a crash", () => {
  it("every acknowledged item is stored exactly once after SIGKILL and restart", async () => {
    await withDataDir(async (dataDir) => {
      let server = await startServer({ DATA_DIR: dataDir })
      const post = (path: string, body: unknown, token?: string) =>
        fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
          body: JSON.stringify(body)
        })
      const key = await signupWithKey(server.url, "crash@example.test")
      const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Dakar", "Perth", "Lyon", "Cusco", "Tunis", "Riga"]
      const items = Array.from({ length: 100 }, (_, n) => ({
        content: `Traveller ${n} booked a ferry to ${cities[n % 10]} for the festival.`,
        metadata: { n }
      }))
      const queued = await post("/v1/record/batch", { space_id: "durable", items }, key)
      expect(queued.status).toBe(202)
      const { job_id } = await json(queued)

      // Kill it while the batch is part-way through (or as soon as it acknowledged, if it is very fast).
      let before: any
      for (let i = 0; i < 400; i++) {
        before = await json(await fetch(`${server.url}/v1/spaces/durable/jobs/${job_id}`, { headers: { authorization: `Bearer ${key}` } }))
        if (before.items.completed > 0) break
        await new Promise((r) => setTimeout(r, 10))
      }
      server.child.kill("SIGKILL")
      expect(before.items.queued).toBeGreaterThan(0) // the kill did land in the middle of the batch
      await new Promise((r) => server.child.once("exit", r))

      server = await startServer({ DATA_DIR: dataDir })
      try {
        const headers = { authorization: `Bearer ${key}` }
        let job: any
        for (let i = 0; i < 600; i++) {
          job = await json(await fetch(`${server.url}/v1/spaces/durable/jobs/${job_id}`, { headers }))
          if (job.status === "completed") break
          await new Promise((r) => setTimeout(r, 100))
        }
        expect(job.status).toBe("completed")
        expect(job.items).toEqual({ total: 100, queued: 0, completed: 100, failed: 0, cancelled: 0 })
        const listed = await json(await fetch(`${server.url}/v1/spaces/durable/memories?limit=1000&type=fact&prefer_observations=false`, { headers }))
        const seen = new Map<number, number>()
        for (const memory of listed.items) seen.set(memory.metadata.n, (seen.get(memory.metadata.n) ?? 0) + 1)
        expect([...seen.keys()].sort((a, b) => a - b)).toEqual(items.map((_, n) => n))
        expect([...seen.values()].every((count) => count === 1)).toBe(true)
        expect(listed.total).toBe(100)
      } finally {
        await server.stop()
      }
    })
  }, 240_000)
})
