/**
 * Erasure that erases, on the embedded store of a real `engram serve`:
 * unique tokens are written, then erased each way the API offers (a memory
 * deleted, a memory edited and then deleted, a document deleted, a space
 * deleted, an uploaded file parsed and its document deleted, and a file's
 * secret that a rule redacted before anything was stored), and every file
 * under DATA_DIR (heap, indexes, TOAST, the write-ahead log, index snapshots)
 * is searched byte by byte, in any letter case, until none holds them. What
 * was not erased stays, and the node is still whole after a restart.
 */
import { describe, expect, it } from "vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { runEngram, type Running, startServer, withDataDir } from "../support/Process.ts"

const token = (label: string) => `zq${label}${Math.random().toString(36).slice(2, 10)}xv`

/** Every file under `dir` whose bytes hold `needle` (ASCII, any case). */
const filesHolding = (dir: string, needles: ReadonlyArray<string>): Map<string, Array<string>> => {
  const found = new Map<string, Array<string>>()
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name)
      const stat = statSync(path, { throwIfNoEntry: false })
      if (stat === undefined) continue
      if (stat.isDirectory()) walk(path)
      else if (stat.isFile() && stat.size > 0) {
        const text = readFileSync(path).toString("latin1").toLowerCase()
        for (const needle of needles) {
          if (text.includes(needle.toLowerCase())) found.set(needle, [...(found.get(needle) ?? []), path.slice(dir.length + 1)])
        }
      }
    }
  }
  walk(dir)
  return found
}

describe("erasure on the embedded store", () => {
  it("a deleted memory, an edited then deleted one, a deleted document, space and uploaded file leave no byte of their text under DATA_DIR", async () => {
    await withDataDir(async (dataDir) => {
      const boot = JSON.parse((await runEngram(["bootstrap", "--org", "E", "--email", "e@example.test"], { DATA_DIR: dataDir })).stdout)
      const env = { DATA_DIR: dataDir, LOG_LEVEL: "info", CONSOLIDATION: "off" }
      let server: Running = await startServer(env)
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${boot.api_key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        const text = await response.text()
        return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
      }
      const record = async (space: string, content: string, extra: Record<string, unknown> = {}) => {
        const reply = await api("POST", "/v1/record", { space_id: space, content, ...extra })
        expect(reply.status, JSON.stringify(reply.body)).toBe(200)
        return reply.body.memories.map((m: any) => m.memory_id) as Array<string>
      }
      const waitJob = async (space: string, jobId: string) => {
        for (let i = 0; i < 300; i++) {
          const job = await api("GET", `/v1/spaces/${space}/jobs/${jobId}`)
          if (job.body?.status === "completed" || job.body?.status === "failed") return job.body
          await new Promise((r) => setTimeout(r, 100))
        }
        throw new Error(`job ${jobId} did not settle`)
      }
      try {
        const t = {
          memory: token("mem"),
          edited: token("edit"),
          kept: token("kept"),
          document: token("doc"),
          space: token("space"),
          file: token("file"),
          secret: `sk-ant-api03-${token("key")}${"Q7w".repeat(8)}`
        }
        // A memory deleted.
        const gone = await record("erase", `Mina keeps her locker code ${t.memory} in a drawer.`)
        // A memory edited (its old text kept in its history, as the contract says) and then deleted.
        const editedIds = await record("erase", `Ravi's badge number is ${t.edited} at the front desk.`)
        // One that stays.
        await record("erase", `Olga's favourite tea is ${t.kept} oolong.`)
        // A document deleted with its memories.
        await record("erase", `Pavel's bike lock combination is ${t.document} for the shed.`, { document_id: "doc-lock" })
        // A whole space deleted.
        await record("erase-space", `Lena's garage code is ${t.space} on weekdays.`)
        // An uploaded file, parsed (its bytes held a key the default rule redacts), then its document deleted.
        const form = new FormData()
        form.append("files", new Blob([`Notes from Tom.\n\nTom's storage unit code is ${t.file}.\nTom's key is ${t.secret} for the vendor.\n`], { type: "text/plain" }), "tom.txt")
        const upload = await fetch(`${server.url}/v1/spaces/erase/documents`, { method: "POST", headers: { authorization: `Bearer ${boot.api_key}` }, body: form })
        expect(upload.status).toBe(202)
        const uploadJob = (await upload.json() as any).job_ids[0]
        expect((await waitJob("erase", uploadJob)).status).toBe("completed")
        const docs = await api("GET", "/v1/spaces/erase/documents?source=file")
        const fileDoc = docs.body.documents.find((d: any) => d.filename === "tom.txt")
        expect(fileDoc).toBeDefined()

        const patched = await api("PATCH", `/v1/spaces/erase/memories/${editedIds[0]}`, { text: "Ravi's badge number is [removed] at the front desk." })
        expect(patched.status, JSON.stringify(patched.body)).toBe(200)
        // The source follows the edit: the old text is in the history only.
        const listed = await api("GET", "/v1/spaces/erase/memories?limit=100")
        const edited = listed.body.items.find((m: any) => m.id === editedIds[0])
        expect(edited.text).toContain("[removed]")
        expect(JSON.stringify(edited)).not.toContain(t.edited)
        const history = await api("GET", `/v1/spaces/erase/memories/${editedIds[0]}/history`)
        expect(JSON.stringify(history.body)).toContain(t.edited)

        for (const id of [...gone, ...editedIds]) expect((await api("DELETE", `/v1/spaces/erase/memories/${id}`)).status).toBe(204)
        expect((await api("DELETE", "/v1/spaces/erase/documents/doc-lock")).status).toBe(204)
        expect((await api("DELETE", `/v1/spaces/erase/documents/${fileDoc.document_id}`)).status).toBe(204)
        expect((await api("DELETE", "/v1/spaces/erase-space")).status).toBe(204)
        // A deleted memory's document goes with its last memory: no empty `memory` documents are left behind.
        const left = await api("GET", "/v1/spaces/erase/documents?limit=100")
        expect(left.body.documents.filter((d: any) => d.memory_count === 0)).toEqual([])

        const erased = [t.memory, t.edited, t.document, t.space, t.file, t.secret]
        // Within the promised five minutes; with writes paused, the pass comes within seconds.
        let holding = filesHolding(dataDir, erased)
        for (let i = 0; i < 120 && holding.size > 0; i++) {
          await new Promise((r) => setTimeout(r, 1_000))
          holding = filesHolding(dataDir, erased)
        }
        expect(Object.fromEntries(holding)).toEqual({})
        expect(server.output()).toMatch(/erased: \d+ request\(s\)/)
        // What was not erased is still on disk and still recalled.
        expect(filesHolding(dataDir, [t.kept]).size).toBe(1)
        const recalled = await api("POST", "/v1/retrieve", { space_id: "erase", query: `Olga favourite tea ${t.kept}` })
        expect(recalled.body.results[0].content).toContain(t.kept)

        // A restart finds the store whole.
        expect(await server.stop()).toBe(0)
        server = await startServer(env)
        const after = await api("POST", "/v1/retrieve", { space_id: "erase", query: `Olga favourite tea ${t.kept}` })
        expect(after.status).toBe(200)
        expect(after.body.results[0].content).toContain(t.kept)
        expect(Object.fromEntries(filesHolding(dataDir, erased))).toEqual({})
      } finally {
        await server.stop()
      }
    })
  }, 300_000)
})
