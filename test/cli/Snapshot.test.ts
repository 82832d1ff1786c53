/**
 * A space woken after a restart reads its index from its snapshot, and only
 * when the snapshot can be trusted: cut short, with a changed byte, or one
 * write behind the store, it is refused, the index is rebuilt from the store
 * and every answer is what it was.
 */
import { describe, expect, it } from "vitest"
import { copyFileSync, readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { runEngram, type Running, startServer, withDataDir } from "../support/Process.ts"

const CONTENTS = [
  "Ines: I visited Montreal for the jazz festival last summer.",
  "Hugo: I cooked lentil soup for the neighbours on Sunday.",
  "Ines: My sister lives in Quebec City and teaches piano.",
  "Hugo: The jazz records I bought at the flea market were scratched.",
  "Maya: I adopted a rescue dog called Pepper in March.",
  "Maya: Pepper is afraid of thunderstorms and hides under the bed.",
  "Omar: I am training for the Lisbon marathon in October.",
  "Omar: My knee hurt after the long run by the river."
]
const QUESTIONS = ["Which city did Ines visit for the jazz festival?", "What is Maya's dog called?", "Which marathon is Omar training for?",
  "What did Hugo cook?", "Where does Ines's sister live?"]

describe("index snapshots across restarts", () => {
  it("serve a woken space from its snapshot, and rebuild from the store when it is cut short, changed or behind", async () => {
    await withDataDir(async (dataDir) => {
      const boot = JSON.parse((await runEngram(["bootstrap", "--org", "S", "--email", "s@example.test"], { DATA_DIR: dataDir })).stdout)
      // Consolidation off: a note made between two restarts would change the answers this test compares.
      const env = { DATA_DIR: dataDir, LOG_LEVEL: "info", CONSOLIDATION: "off" }
      const call = async (server: Running, path: string, body: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${boot.api_key}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
        expect(response.status, await response.clone().text()).toBe(200)
        return (await response.json()) as any
      }
      const answers = async (server: Running) => {
        const out: Array<unknown> = []
        for (const query of QUESTIONS) {
          const { results } = await call(server, "/v1/retrieve", { space_id: "notes", query, limit: 5 })
          out.push(results.map((r: any) => [r.memory_id, r.content, r.relevance_score]))
        }
        return out
      }
      const snapshotFile = () => {
        const files = readdirSync(join(dataDir, "snapshots")).filter((f) => f.endsWith(".snap"))
        expect(files).toHaveLength(1)
        return join(dataDir, "snapshots", files[0]!)
      }
      /** A restart: the answers, and where the woken space's index came from (the node's log says). */
      const restart = async () => {
        const server = await startServer(env)
        try {
          const got = await answers(server)
          const loaded = /space index loaded from the (snapshot|store)/.exec(server.output())
          return { got, source: loaded?.[1], log: server.output() }
        } finally {
          await server.stop()
        }
      }

      let server = await startServer(env)
      let before: Array<unknown>
      try {
        for (const content of CONTENTS) await call(server, "/v1/record", { space_id: "notes", content })
        before = await answers(server)
        expect(before.every((hits) => Array.isArray(hits) && hits.length > 0)).toBe(true)
      } finally {
        // Stopping writes the snapshot.
        await server.stop()
      }
      const file = snapshotFile()

      const woken = await restart()
      expect(woken.source).toBe("snapshot")
      expect(woken.got).toEqual(before)

      // Cut short: refused, rebuilt, the same answers; the node stopping writes a good snapshot again.
      truncateSync(file, Math.floor(readFileSync(file).length / 2))
      const cut = await restart()
      expect(cut.source).toBe("store")
      expect(cut.log).toMatch(/index snapshot not used/)
      expect(cut.got).toEqual(before)
      expect((await restart()).source).toBe("snapshot")

      // One byte changed.
      const bytes = readFileSync(file)
      bytes[bytes.length - 10] = bytes[bytes.length - 10]! ^ 0xff
      writeFileSync(file, bytes)
      const changed = await restart()
      expect(changed.source).toBe("store")
      expect(changed.log).toMatch(/checksum/)
      expect(changed.got).toEqual(before)

      // One write behind: the snapshot taken before the last write, put back after it.
      const behind = `${file}.behind`
      copyFileSync(file, behind)
      server = await startServer(env)
      let after: Array<unknown>
      try {
        await call(server, "/v1/record", { space_id: "notes", content: "Ines: I moved to Montreal for good in May." })
        after = await answers(server)
      } finally {
        await server.stop()
      }
      copyFileSync(behind, file)
      const stale = await restart()
      expect(stale.source).toBe("store")
      expect(stale.log).toMatch(/behind the store/)
      expect(stale.got).toEqual(after)
      expect(JSON.stringify(stale.got)).toContain("moved to Montreal for good")
    })
  }, 300_000)
})
