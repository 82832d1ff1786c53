/**
 * A node's worker threads run below its main thread's priority, so that on
 * busy cores the kernel serves requests first: after a queued write (extracted
 * on the extraction thread), a real `engram serve` has a thread at
 * WORKER_NICENESS and its main thread at the niceness it started with.
 * Linux only: other platforms have no per-thread niceness to read.
 */
import { describe, expect, it } from "vitest"
import { readdirSync, readFileSync } from "node:fs"
import { WORKER_NICENESS } from "../../services/ThreadPriority.ts"
import { runEngram, startServer, withDataDir } from "../support/Process.ts"

/** Each thread's niceness, by kernel thread id (field 19 of /proc/PID/task/TID/stat). */
const niceness = (pid: number) =>
  new Map(readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return [Number(tid), Number(fields[16])] as const
  }))

describe.skipIf(process.platform !== "linux")("thread priority", () => {
  it("the extraction thread runs at WORKER_NICENESS, the main thread as started", async () => {
    await withDataDir(async (dataDir) => {
      const key = JSON.parse((await runEngram(["bootstrap", "--org", "P", "--email", "p@example.test"], { DATA_DIR: dataDir })).stdout).api_key
      const server = await startServer({ DATA_DIR: dataDir, CONSOLIDATION: "off" })
      try {
        const pid = server.child.pid!
        const own = niceness(process.pid).get(process.pid) ?? 0
        const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
        expect((await fetch(`${server.url}/v1/spaces`, { method: "POST", headers, body: JSON.stringify({ space_id: "nice" }) })).status).toBe(201)
        // Queued writes are extracted on the node's extraction thread.
        const queued = await fetch(`${server.url}/v1/record/batch`, {
          method: "POST",
          headers,
          body: JSON.stringify({ space_id: "nice", items: [{ content: "Maya moved to Lisbon in March 2024 and adopted a greyhound called Pixel." }] })
        })
        expect(queued.status).toBe(202)
        const job = (await queued.json() as { job_id: string }).job_id
        for (let tries = 0; tries < 100; tries++) {
          const status = (await (await fetch(`${server.url}/v1/jobs/${job}`, { headers })).json() as { status: string }).status
          if (status === "completed") break
          await new Promise((r) => setTimeout(r, 100))
        }
        const threads = niceness(pid)
        expect(threads.get(pid)).toBe(own)
        // Niceness stops at 19.
        expect([...threads.values()].filter((n) => n === Math.min(19, own + WORKER_NICENESS)).length).toBeGreaterThanOrEqual(1)
      } finally {
        await server.stop()
      }
    })
  }, 120_000)
})
