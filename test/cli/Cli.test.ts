/** The newcomer's path through the real executable: serve, bootstrap, keys, and loud start-up failures. */
import { readdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { runEngram, signupWithKey, startServer, TEST_WEBHOOK_KEY, withDataDir } from "../support/Process.ts"

describe("engram CLI on the embedded store", () => {
  it("DATA_DIR=memory:// keeps the store in memory: it serves, and writes nothing where it runs", async () => {
    await withDataDir(async (cwd) => {
      const server = await startServer({ DATA_DIR: "memory://" }, { cwd })
      try {
        const key = await signupWithKey(server.url, "memory@example.test")
        const recorded = await fetch(`${server.url}/v1/record`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ space_id: "scratch", content: "Ada keeps bees." })
        })
        expect(recorded.status).toBe(200)
        expect(server.output()).toContain("embedded PGlite in memory")
      } finally {
        expect(await server.stop()).toBe(0)
      }
      expect(readdirSync(cwd)).toEqual([])
    })
  }, 120_000)

  it("bootstrap prints one JSON line whose key and session work on a server started afterwards", async () => {
    await withDataDir(async (dataDir) => {
      const boot = await runEngram(["bootstrap", "--org", "Acme", "--email", "ops@acme.example", "--password", "s3cret-pass"], {
        DATA_DIR: dataDir
      })
      expect(boot.code, boot.stderr).toBe(0)
      const lines = boot.stdout.trim().split("\n")
      expect(lines).toHaveLength(1)
      const out = JSON.parse(lines[0]!)
      expect(Object.keys(out).sort()).toEqual(["api_key", "org_id", "session_token", "user_id"])
      expect(out.api_key).toMatch(/^svc_test_[A-Za-z0-9]{44}$/)
      expect(out.session_token).toMatch(/^ses_/)
      expect(boot.stdout + boot.stderr).not.toContain("s3cret-pass")

      const listed = await runEngram(["keys", "list", "--org", out.org_id], { DATA_DIR: dataDir })
      expect(listed.code, listed.stderr).toBe(0)
      const keys = JSON.parse(listed.stdout)
      expect(keys).toHaveLength(1)
      expect(keys[0]).toMatchObject({ name: "bootstrap", env: "test", status: "active" })
      expect(listed.stdout).not.toContain(out.api_key)

      const server = await startServer({ DATA_DIR: dataDir, LOG_FORMAT: "json" })
      try {
        // While the server holds the embedded store, a second process refuses clearly.
        const busy = await runEngram(["bootstrap", "--org", "Other", "--email", "x@y.example"], { DATA_DIR: dataDir })
        expect(busy.code).toBe(1)
        expect(busy.stderr).toMatch(/in use by another Engram process/)

        const headers = { authorization: `Bearer ${out.api_key}`, "content-type": "application/json" }
        const created = await fetch(`${server.url}/v1/spaces`, { method: "POST", headers, body: JSON.stringify({ space_id: "notes" }) })
        expect(created.status).toBe(201)
        const me = await fetch(`${server.url}/v1/orgs/me`, { headers: { authorization: `Bearer ${out.session_token}` } })
        expect(await me.json()).toMatchObject({ org_id: out.org_id, name: "Acme", role: "owner", email: "ops@acme.example" })
        const login = await fetch(`${server.url}/auth/login`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "ops@acme.example", password: "s3cret-pass" })
        })
        expect(login.status).toBe(200)

        // Logs: JSON lines with the request id, and no secret anywhere.
        const logLines = server.output().trim().split("\n").filter((l) => l.startsWith("{"))
        expect(logLines.length).toBeGreaterThan(2)
        const startup = logLines.map((l) => JSON.parse(l)).find((l) => String(l.message).includes("listening"))
        expect(startup.annotations.store).toContain("embedded PGlite")
        expect(startup.annotations.cache).toContain("in-process")
        expect(logLines.some((l) => JSON.parse(l).annotations?.request_id === created.headers.get("x-request-id"))).toBe(true)
        for (const secret of [out.api_key, out.session_token, "s3cret-pass"]) expect(server.output()).not.toContain(secret)
      } finally {
        expect(await server.stop()).toBe(0)
      }

      // Data survives the restart, and keys can be revoked from the CLI.
      const revoke = await runEngram(["keys", "revoke", "--org", out.org_id, keys[0].id], { DATA_DIR: dataDir })
      expect(revoke.code, revoke.stderr).toBe(0)
      const created = await runEngram(["keys", "create", "--org", out.org_id, "--name", "deploy", "--env", "live", "--expires-in-days", "90"], {
        DATA_DIR: dataDir
      })
      expect(created.code, created.stderr).toBe(0)
      expect(JSON.parse(created.stdout)).toMatchObject({ name: "deploy", env: "live", status: "active" })
      const after = JSON.parse((await runEngram(["keys", "list", "--org", out.org_id], { DATA_DIR: dataDir })).stdout)
      expect(after.map((k: any) => k.name)).toEqual(["deploy"])

      const again = await startServer({ DATA_DIR: dataDir })
      try {
        const spaces = await fetch(`${again.url}/v1/spaces/notes`, { headers: { authorization: `Bearer ${out.api_key}` } })
        expect(spaces.status).toBe(401)
        expect(((await spaces.json()) as any).error.code).toBe("unauthorized")
        const viaSession = await fetch(`${again.url}/v1/spaces/notes`, { headers: { authorization: `Bearer ${out.session_token}` } })
        expect(viaSession.status).toBe(200)
      } finally {
        await again.stop()
      }
    })
  }, 180_000)

  it("an unknown organization is a clear error", async () => {
    await withDataDir(async (dataDir) => {
      const result = await runEngram(["keys", "list", "--org", "org_missing"], { DATA_DIR: dataDir })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("no organization org_missing")
    })
  }, 60_000)
})

describe("start-up refuses loudly instead of falling back", () => {
  it("an unreachable DATABASE_URL stops start-up, naming it without the password", async () => {
    await withDataDir(async (dataDir) => {
      const result = await runEngram(["serve"], {
        DATA_DIR: dataDir,
        DATABASE_URL: "postgres://app:hunter2@127.0.0.1:1/engram",
        WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY
      })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("cannot use PostgreSQL at postgres://127.0.0.1:1/engram (DATABASE_URL)")
      expect(result.stderr + result.stdout).not.toContain("hunter2")
      expect(result.stdout).not.toContain("listening")
    })
  }, 60_000)

  it("an unreachable REDIS_URL stops start-up", async () => {
    await withDataDir(async (dataDir) => {
      const result = await runEngram(["serve"], { DATA_DIR: dataDir, REDIS_URL: "redis://127.0.0.1:1" })
      expect(result.code).toBe(1)
      expect(result.stderr).toContain("cannot reach Redis at redis://127.0.0.1:1 (REDIS_URL)")
    })
  }, 60_000)

  it("a bad setting stops start-up naming the variable", async () => {
    for (
      const [name, value] of [
        ["PORT", "eighty"],
        ["SESSION_TTL_HOURS", "0"],
        ["LOG_LEVEL", "loud"],
        ["WEBHOOK_RETRY_SCHEDULE", "0,5,soon"],
        ["WEBHOOK_ALLOW_PRIVATE", "maybe"],
        ["WEBHOOK_SECRET_KEY", "short"]
      ] as const
    ) {
      const result = await runEngram(["serve"], { [name]: value, DATA_DIR: "memory://" })
      expect(result.code, name).toBe(1)
      expect(result.stderr, name).toContain(name)
    }
    // Six start-ups in a row: generous on a busy two-core machine.
  }, 120_000)
})
