/**
 * Durability of document uploads: SIGKILL the server between an upload's 202
 * and the end of its parsing, start it again, and find every file parsed,
 * each chunk stored exactly once.
 */
import { describe, expect, it } from "vitest"
import { signupWithKey, startServer, withDataDir } from "../support/Process.ts"

const json = async (response: Response) => (await response.json()) as any

/** A CSV of `rows` offices: enough rows that parsing six of them takes a while. */
const csv = (file: number, rows: number) =>
  ["City,Office lead,Opened"]
    .concat(Array.from({ length: rows }, (_, n) => `Town ${file}-${n},Lead ${n} of file ${file},${2000 + (n % 25)}`))
    .join("\n")

describe("uploaded documents survive a crash", () => {
  it("every acknowledged file is parsed, each chunk stored once, after SIGKILL and restart", async () => {
    await withDataDir(async (dataDir) => {
      // Consolidation off: the space holds exactly the files' chunks (no notes built on them).
      const env = { DATA_DIR: dataDir, CONSOLIDATION: "off" }
      let server = await startServer(env)
      const key = await signupWithKey(server.url, "doc-crash@example.test")
      const headers = { authorization: `Bearer ${key}` }

      const form = new FormData()
      for (let file = 0; file < 6; file++) {
        form.append("files", new Blob([csv(file, 3000)], { type: "text/csv" }), `offices-${file}.csv`)
      }
      const uploaded = await fetch(`${server.url}/v1/spaces/durable-docs/documents`, { method: "POST", headers, body: form })
      expect(uploaded.status).toBe(202)
      const { job_ids } = await json(uploaded)
      expect(job_ids).toHaveLength(6)

      // Kill it at once: the last file cannot have been parsed yet.
      const last = await json(await fetch(`${server.url}/v1/spaces/durable-docs/jobs/${job_ids[5]}`, { headers }))
      server.child.kill("SIGKILL")
      expect(["queued", "processing"]).toContain(last.status) // the kill did land before the upload was parsed
      await new Promise((r) => server.child.once("exit", r))

      server = await startServer(env)
      try {
        for (const jobId of job_ids) {
          let job: any
          for (let i = 0; i < 900; i++) {
            job = await json(await fetch(`${server.url}/v1/spaces/durable-docs/jobs/${jobId}`, { headers }))
            if (job.status !== "queued" && job.status !== "processing") break
            await new Promise((r) => setTimeout(r, 100))
          }
          expect(job.status, JSON.stringify(job)).toBe("completed")
        }
        const documents = await json(await fetch(`${server.url}/v1/spaces/durable-docs/documents`, { headers }))
        expect(documents.total).toBe(6)
        const byDocument = new Map<string, Array<number>>()
        let total = 0
        for (let offset = 0; ; offset += 1000) {
          const page = await json(
            await fetch(`${server.url}/v1/spaces/durable-docs/memories?limit=1000&offset=${offset}&prefer_observations=false`, { headers })
          )
          total = page.total
          for (const memory of page.items) {
            const chunks = byDocument.get(memory.document_id) ?? []
            chunks.push(memory.metadata.chunk)
            byDocument.set(memory.document_id, chunks)
          }
          if (page.items.length < 1000) break
        }
        expect([...byDocument.values()].reduce((n, chunks) => n + chunks.length, 0)).toBe(total)
        for (const document of documents.documents) {
          const chunks = (byDocument.get(document.document_id) ?? []).sort((a, b) => a - b)
          // Every chunk once: 0, 1, ..., n-1, and the document counts exactly those.
          expect(chunks.length).toBeGreaterThan(0)
          expect(chunks).toEqual(chunks.map((_, n) => n))
          expect(document.memory_count).toBe(chunks.length)
        }
        // And every row is there: each file's last office can be found.
        const found = await json(
          await fetch(`${server.url}/v1/retrieve`, {
            method: "POST",
            headers: { ...headers, "content-type": "application/json" },
            body: JSON.stringify({ space_id: "durable-docs", query: "Town 5-2999", limit: 3 })
          })
        )
        expect(found.results.map((r: any) => r.content).join("\n")).toContain("Town 5-2999")
      } finally {
        await server.stop()
      }
    })
  }, 300_000)
})
