/**
 * `engram export` and `engram import` through the real executable: on the
 * embedded store with the server stopped (the CLI runs the import itself),
 * and on PostgreSQL beside a running server (the CLI queues the import; the
 * server's waker and the space's entity run it, and the running index knows
 * the memories at once).
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { clusterDatabase, clusterSkipReason } from "../support/ClusterNodes.ts"
import { freePort, ROOMY_PLANS, runEngram, startServer, TEST_WEBHOOK_KEY, withDataDir } from "../support/Process.ts"

const BIN = join(import.meta.dirname, "..", "..", "bin", "engram.mjs")

/** `engram <args>` with `input` on stdin (runEngram gives none); the test run's profile variables are not inherited. */
const runWithInput = async (args: ReadonlyArray<string>, env: Record<string, string>, input: string) => {
  const base = { ...process.env }
  for (const name of ["DATABASE_URL", "REDIS_URL", "PORT", "DATA_DIR", "RUNNER_HOST", "RUNNER_PORT", "WEBHOOK_SECRET_KEY"]) delete base[name]
  const models = process.env.ENGRAM_TEST_MODELS_DIR ? { MODELS_DIR: process.env.ENGRAM_TEST_MODELS_DIR } : {}
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...base, ...models, PLANS_CONFIG: ROOMY_PLANS, ...env }, stdio: ["pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  child.stdin.end(input)
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
  const [code] = await once(child, "exit")
  clearTimeout(timer)
  return { code: code as number | null, stdout, stderr }
}

const api = (url: string, token: string) => async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

const MEMORIES = [
  { content: "Ines visited Lisbon for the jazz festival.", user_id: "ines" },
  { content: "Hugo repairs vintage bicycles on weekends.", session_id: "s-1" },
  { content: "The lighthouse tour starts at nine.", tags: ["trips"] }
]

/** Equal apart from the header line (which names the space and the time of the export). */
const body = (file: string) => file.split("\n").slice(1)

describe("engram export and import", () => {
  it("on the embedded store with the server stopped: the file round-trips and a restarted server recalls it", async () => {
    await withDataDir(async (dataDir) => {
      const env = { DATA_DIR: dataDir }
      const boot = JSON.parse((await runEngram(["bootstrap", "--org", "Acme", "--email", "ops@acme.example"], env)).stdout)
      const other = JSON.parse((await runEngram(["bootstrap", "--org", "Other", "--email", "ops@other.example"], env)).stdout)
      let server = await startServer(env)
      let ids: Array<string> = []
      try {
        const call = api(server.url, boot.api_key)
        expect((await call("POST", "/v1/spaces", { space_id: "copy" })).status).toBe(201)
        for (const memory of MEMORIES) {
          const recorded = await call("POST", "/v1/record", { space_id: "notes", ...memory })
          expect(recorded.status).toBe(200)
          ids.push(...recorded.body.memories.map((m: any) => m.memory_id))
        }
        expect((await call("PATCH", `/v1/spaces/notes/memories/${ids[1]}`, { text: "Hugo restores vintage bicycles on weekends." })).status).toBe(200)
        // Another organization holds a space of the same id: the CLI then needs --org.
        expect((await api(server.url, other.api_key)("POST", "/v1/spaces", { space_id: "notes" })).status).toBe(201)
      } finally {
        expect(await server.stop()).toBe(0)
      }

      const ambiguous = await runEngram(["export", "--space", "notes"], env)
      expect(ambiguous.code).toBe(1)
      expect(ambiguous.stderr).toContain("held by several organizations")
      const missing = await runEngram(["export", "--space", "nowhere"], env)
      expect(missing.code).toBe(1)
      expect(missing.stderr).toContain("no space nowhere")

      const exported = await runEngram(["export", "--space", "notes", "--org", "Acme"], env)
      expect(exported.code, exported.stderr).toBe(0)
      const lines = exported.stdout.trimEnd().split("\n").map((l) => JSON.parse(l))
      expect(lines[0]).toMatchObject({ kind: "header", format: "engram.space-export", version: 1, space_id: "notes" })
      expect(lines.filter((l) => l.kind === "memory").map((l) => l.id).sort()).toEqual([...ids].sort())
      expect(lines.find((l) => l.id === ids[1]).history.map((h: any) => h.change)).toEqual(["created", "edited"])
      expect(lines[lines.length - 1]).toMatchObject({ kind: "end", counts: { memories: 3 } })

      const imported = await runWithInput(["import", "--space", "copy", "--org", boot.org_id], env, exported.stdout)
      expect(imported.code, imported.stderr).toBe(0)
      expect(JSON.parse(imported.stdout)).toMatchObject({ space_id: "copy", status: "completed", item_count: lines.length - 2, error: null })
      const again = await runWithInput(["import", "--space", "copy", "--org", "Acme"], env, exported.stdout)
      expect(again.code).toBe(1)
      expect(again.stderr).toContain("is not empty")

      const reexported = await runEngram(["export", "--space", "copy"], env)
      expect(reexported.code, reexported.stderr).toBe(0)
      expect(JSON.parse(reexported.stdout.split("\n")[0]!)).toMatchObject({ kind: "header", space_id: "copy" })
      expect(body(reexported.stdout)).toEqual(body(exported.stdout))

      server = await startServer(env)
      try {
        const call = api(server.url, boot.api_key)
        const found = await call("POST", "/v1/retrieve", { space_id: "copy", query: "Who restores vintage bicycles?", limit: 5 })
        expect(found.body.results.map((r: any) => r.memory_id)).toContain(ids[1])
        const history = await call("GET", `/v1/spaces/copy/memories/${ids[1]}/history`)
        expect(history.body.entries.map((e: any) => e.change)).toEqual(["edited", "created"])
      } finally {
        expect(await server.stop()).toBe(0)
      }
    })
  }, 420_000)

  it.skipIf(clusterSkipReason !== undefined)("on PostgreSQL beside a running server: the running space's index learns of the import", async () => {
    const database = await clusterDatabase()
    try {
      await withDataDir(async (dataDir) => {
        const env = {
          DATA_DIR: dataDir,
          DATABASE_URL: database.url,
          REDIS_URL: process.env.REDIS_URL!,
          WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
          RUNNER_HOST: "127.0.0.1",
          RUNNER_PORT: String(await freePort())
        }
        const boot = JSON.parse((await runEngram(["bootstrap", "--org", "Acme", "--email", "ops@acme.example"], env)).stdout)
        const server = await startServer(env)
        try {
          const call = api(server.url, boot.api_key)
          const ids: Array<string> = []
          for (const memory of MEMORIES) {
            const recorded = await call("POST", "/v1/record", { space_id: "notes", ...memory })
            ids.push(...recorded.body.memories.map((m: any) => m.memory_id))
          }
          expect((await call("POST", "/v1/spaces", { space_id: "copy" })).status).toBe(201)
          // The copy's entity is live, with an empty index, before the import.
          expect((await call("POST", "/v1/retrieve", { space_id: "copy", query: "lighthouse tour", limit: 5 })).body.results).toEqual([])

          const exported = await runEngram(["export", "--space", "notes"], { ...env, RUNNER_PORT: String(await freePort()) })
          expect(exported.code, exported.stderr).toBe(0)
          const imported = await runWithInput(["import", "--space", "copy"], env, exported.stdout)
          expect(imported.code, imported.stderr).toBe(0)
          expect(JSON.parse(imported.stdout)).toMatchObject({ space_id: "copy", status: "completed" })

          const found = await call("POST", "/v1/retrieve", { space_id: "copy", query: "When does the lighthouse tour start?", limit: 5 })
          expect(found.body.results.map((r: any) => r.memory_id)).toContain(ids[2])
          const reexported = await runEngram(["export", "--space", "copy"], env)
          expect(body(reexported.stdout)).toEqual(body(exported.stdout))
        } finally {
          expect(await server.stop()).toBe(0)
        }
      })
    } finally {
      await database.drop()
    }
  }, 300_000)
})
