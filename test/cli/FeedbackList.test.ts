/** `engram feedback list`: the operator reads back what members sent through `POST /v1/feedback`. */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { runEngram, signupWithKey, startServer, withDataDir } from "../support/Process.ts"

const Bootstrapped = Schema.parseJson(Schema.Struct({ org_id: Schema.String, user_id: Schema.String, api_key: Schema.String }))

const Listed = Schema.parseJson(Schema.Array(Schema.Struct({
  feedback_id: Schema.String,
  org_id: Schema.String,
  org_name: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  category: Schema.Literal("bug", "idea", "other"),
  message: Schema.String,
  page: Schema.NullOr(Schema.String),
  created_at: Schema.String
})))

const ESC = "\u001b"

describe("engram feedback list", () => {
  it("prints what was sent through the HTTP route, newest first, filtered, limited, as JSON, and safely", async () => {
    await withDataDir(async (dataDir) => {
      const env = { DATA_DIR: dataDir }
      const boot = await runEngram(["bootstrap", "--org", "Acme", "--email", "ops@acme.example"], env)
      expect(boot.code, boot.stderr).toBe(0)
      const acme = Schema.decodeUnknownSync(Bootstrapped)(boot.stdout.trim())

      const empty = await runEngram(["feedback", "list"], env)
      expect(empty.code, empty.stderr).toBe(0)
      expect(empty.stdout.trim()).toBe("no feedback")

      const sent = [
        { key: "acme", body: { category: "bug", message: "Search misses plurals", page: "/spaces/notes" } },
        { key: "bob", body: { category: "idea", message: "Dark mode\nplease" } },
        { key: "acme", body: { category: "idea", message: `Red ${ESC}[31malert${ESC}[0m text`, page: "/settings/keys" } },
        { key: "acme", body: { message: "Just saying hi" } }
      ] as const
      const server = await startServer(env)
      try {
        const keys = { acme: acme.api_key, bob: await signupWithKey(server.url, "bob@beta.example") }
        for (const { key, body } of sent) {
          const response = await fetch(`${server.url}/v1/feedback`, {
            method: "POST",
            headers: { authorization: `Bearer ${keys[key]}`, "content-type": "application/json" },
            body: JSON.stringify(body)
          })
          expect(response.status, await response.text()).toBe(202)
          await new Promise((r) => setTimeout(r, 20)) // distinct created_at, so "newest first" is a fact to check
        }
      } finally {
        expect(await server.stop()).toBe(0)
      }

      // --json: every row, newest first, with its sender.
      const json = await runEngram(["feedback", "list", "--json"], env)
      expect(json.code, json.stderr).toBe(0)
      const rows = Schema.decodeUnknownSync(Listed)(json.stdout.trim())
      expect(rows.map((r) => [r.category, r.message, r.page, r.email, r.org_name])).toEqual([
        ["other", "Just saying hi", null, "ops@acme.example", "Acme"],
        ["idea", `Red ${ESC}[31malert${ESC}[0m text`, "/settings/keys", "ops@acme.example", "Acme"],
        ["idea", "Dark mode\nplease", null, "bob@beta.example", "bob"],
        ["bug", "Search misses plurals", "/spaces/notes", "ops@acme.example", "Acme"]
      ])
      expect(rows[0]).toMatchObject({ org_id: acme.org_id, user_id: acme.user_id })
      for (const row of rows) expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      const times = rows.map((r) => Date.parse(r.created_at))
      expect(times).toEqual([...times].sort((a, b) => b - a))
      expect(new Set(times).size).toBe(4)

      // Human output: one block per item, newest first, nothing raw from the message reaching the terminal.
      const human = await runEngram(["feedback", "list"], env)
      expect(human.code, human.stderr).toBe(0)
      expect(human.stdout).not.toContain(ESC)
      const blocks = human.stdout.trim().split("\n\n")
      expect(blocks).toHaveLength(4)
      expect(blocks[0]).toBe(`${rows[0]!.created_at}  other  Acme (${acme.org_id})  ops@acme.example\n  "Just saying hi"`)
      expect(blocks[1]).toBe(
        `${rows[1]!.created_at}  idea  Acme (${acme.org_id})  ops@acme.example  /settings/keys\n  "Red \\u001b[31malert\\u001b[0m text"`
      )
      expect(blocks[2]).toBe(`${rows[2]!.created_at}  idea  bob (${rows[2]!.org_id})  bob@beta.example\n  "Dark mode\\nplease"`)
      expect(blocks[3]).toContain("  bug  Acme")
      expect(blocks[3]).toContain("/spaces/notes")
      expect(blocks[3]).toContain(`"Search misses plurals"`)

      const ideas = await runEngram(["feedback", "list", "--category", "idea", "--json"], env)
      expect(ideas.code, ideas.stderr).toBe(0)
      expect(Schema.decodeUnknownSync(Listed)(ideas.stdout.trim()).map((r) => r.message)).toEqual([
        `Red ${ESC}[31malert${ESC}[0m text`,
        "Dark mode\nplease"
      ])
      const one = await runEngram(["feedback", "list", "--limit", "1", "--json"], env)
      expect(one.code, one.stderr).toBe(0)
      expect(Schema.decodeUnknownSync(Listed)(one.stdout.trim()).map((r) => r.message)).toEqual(["Just saying hi"])

      const bugOnly = await runEngram(["feedback", "list", "--category", "bug", "--limit", "1"], env)
      expect(bugOnly.code, bugOnly.stderr).toBe(0)
      expect(bugOnly.stdout).toContain(`"Search misses plurals"`)
      expect(bugOnly.stdout.trim().split("\n")).toHaveLength(2)

      for (const limit of ["0", "1001"]) {
        const bad = await runEngram(["feedback", "list", "--limit", limit], env)
        expect(bad.code, limit).toBe(1)
        expect(bad.stderr, limit).toContain("--limit must be 1 to 1000")
        expect(bad.stdout, limit).toBe("")
      }
    })
  }, 300_000)
})
