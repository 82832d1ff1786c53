/**
 * A space rebuilt from PostgreSQL answers exactly as before; `engram reembed`
 * moves a space's vectors to the configured embedder.
 */
import { describe, expect, it } from "vitest"
import { createServer } from "node:http"
import { runEngram, startServer, withDataDir } from "../support/Process.ts"

/** A stand-in OpenAI-compatible embeddings endpoint (a third-party boundary). */
const fakeEmbeddings = async () => {
  const server = createServer((req, res) => {
    let raw = ""
    req.on("data", (d) => (raw += d))
    req.on("end", () => {
      const input = JSON.parse(raw).input as Array<string>
      const data = input.map((text, index) => ({ index, embedding: [text.length % 7, 1, (text.length * 3) % 5] }))
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data }))
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, close: () => new Promise((r) => server.close(r)) }
}

describe("rebuilding a space", () => {
  it("answers identically after a restart, and reembed switches its embedder", async () => {
    await withDataDir(async (dataDir) => {
      const fake = await fakeEmbeddings()
      const boot = JSON.parse((await runEngram(["bootstrap", "--org", "R", "--email", "r@example.test"], { DATA_DIR: dataDir })).stdout)
      const ask = async (url: string) => {
        const response = await fetch(`${url}/v1/retrieve`, {
          method: "POST",
          headers: { authorization: `Bearer ${boot.api_key}`, "content-type": "application/json" },
          body: JSON.stringify({ space_id: "notes", query: "Which city did Ines visit for the jazz festival?", limit: 5 })
        })
        return ((await response.json()) as any).results.map((r: any) => [r.memory_id, r.relevance_score])
      }
      let server = await startServer({ DATA_DIR: dataDir, EMBEDDINGS_BASE_URL: fake.url, EMBEDDINGS_MODEL: "fake-3d" })
      let before: Array<unknown>
      try {
        for (const content of [
          "Ines: I visited Montreal for the jazz festival.",
          "Hugo: I cooked lentil soup for the neighbours.",
          "Ines: My sister lives in Quebec City.",
          "Hugo: The jazz records I bought were scratched."
        ]) {
          const r = await fetch(`${server.url}/v1/record`, {
            method: "POST",
            headers: { authorization: `Bearer ${boot.api_key}`, "content-type": "application/json" },
            body: JSON.stringify({ space_id: "notes", content })
          })
          expect(r.status).toBe(200)
        }
        before = await ask(server.url)
        expect(before.length).toBeGreaterThan(0)
      } finally {
        await server.stop()
      }

      server = await startServer({ DATA_DIR: dataDir, EMBEDDINGS_BASE_URL: fake.url, EMBEDDINGS_MODEL: "fake-3d" })
      try {
        expect(await ask(server.url)).toEqual(before)
      } finally {
        await server.stop()
        await fake.close()
      }

      const reembed = await runEngram(["reembed", "--org", boot.org_id, "--space", "notes"], { DATA_DIR: dataDir })
      expect(reembed.code, reembed.stderr).toBe(0)
      expect(JSON.parse(reembed.stdout)).toEqual({ space_id: "notes", embedder: "glove-sg-100d-sif@1", reembedded: 4 })
      const again = await runEngram(["reembed", "--org", boot.org_id, "--space", "notes"], { DATA_DIR: dataDir })
      expect(JSON.parse(again.stdout).reembedded).toBe(0)
    })
  }, 240_000)
})
