/**
 * Erasure through the API on both profiles, read in the store itself: an
 * edit's removed text leaves `source_text` (kept only in the history), a
 * deleted memory takes its document along when it was the last, and every
 * erasure notes a request that the store's erasure pass carries out within
 * seconds once writes pause (the embedded store rewrites the tables, a
 * PostgreSQL server vacuums them). The bytes on disk are searched in
 * test/cli/Erasure.test.ts.
 */
import { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { baseUrl, call, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const Source = Schema.Array(Schema.Struct({ text: Schema.String, source_text: Schema.String }))
const Count = Schema.Array(Schema.Struct({ n: Schema.NumberFromString }))

eachProfile("erasure", (it) => {
  it.effect("an edit's old text leaves source_text; a memory's last delete takes its document; the erasure pass runs and empties its queue", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const spaceId = `erase-${Date.now()}`
      const secret = `qx${Math.random().toString(36).slice(2, 12)}`
      const wrote = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: `Ravi's badge number is ${secret} at the desk.` } })
      expect(wrote.status, wrote.text).toBe(200)
      const memoryId: string = wrote.body.memories[0].memory_id
      const documentId: string = wrote.body.document_id

      const patched = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: key, json: { text: "Ravi's badge number is [removed] at the desk." } })
      expect(patched.status, patched.text).toBe(200)
      const row = Schema.decodeUnknownSync(Source)(yield* sql`SELECT text, source_text FROM memories WHERE id = ${memoryId}`)
      expect(row[0]!.text).toBe("Ravi's badge number is [removed] at the desk.")
      expect(row[0]!.source_text).toBe("Ravi's badge number is [removed] at the desk.")
      // The history the contract defines keeps what it said.
      const history = yield* call("GET", `/v1/spaces/${spaceId}/memories/${memoryId}/history`, { token: key })
      expect(history.text).toContain(secret)

      // A document with other memories (an uploaded file's chunks) is kept until the last one goes.
      const base = yield* baseUrl
      const paragraph = (who: string) => `${who} keeps a diary of the garden. `.repeat(60)
      const form = new FormData()
      form.append("files", new Blob([`${paragraph("Olga")}\n\n${paragraph("Tomas")}\n\n${paragraph("Ines")}`], { type: "text/plain" }), "garden.txt")
      const uploaded = yield* Effect.promise(() =>
        fetch(`${base}/v1/spaces/${spaceId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form }).then((r) => r.json() as Promise<any>)
      )
      const jobId: string = uploaded.job_ids[0]
      for (let i = 0; i < 300; i++) {
        const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })
        if (job.body.status === "completed") break
        yield* Effect.sleep("100 millis")
      }
      const fileMemories = yield* call("GET", `/v1/spaces/${spaceId}/memories?limit=100`, { token: key })
      const fileDocument: string = fileMemories.body.items.find((m: any) => m.text.includes("garden")).document_id
      const twoIds: Array<string> = fileMemories.body.items.filter((m: any) => m.document_id === fileDocument).map((m: any) => m.id)
      expect(twoIds.length).toBeGreaterThanOrEqual(2)
      const documents = () => call("GET", `/v1/spaces/${spaceId}/documents?limit=100`, { token: key }).pipe(
        Effect.map((r) => (r.body.documents as Array<{ document_id: string }>).map((d) => d.document_id))
      )
      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${memoryId}`, { token: key })).status).toBe(204)
      expect(yield* documents()).not.toContain(documentId)
      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${twoIds[0]}`, { token: key })).status).toBe(204)
      expect(yield* documents()).toContain(fileDocument)
      for (const id of twoIds.slice(1)) expect((yield* call("DELETE", `/v1/spaces/${spaceId}/memories/${id}`, { token: key })).status).toBe(204)
      expect(yield* documents()).not.toContain(fileDocument)
      // Nothing of the memory is left in the store's rows: its history went with it.
      const left = Schema.decodeUnknownSync(Count)(yield* sql`SELECT count(*)::text AS n FROM memory_history WHERE memory_id = ${memoryId}`)
      expect(left[0]!.n).toBe(0)

      // Each erasure was noted; the pass carries them out once writes pause (seconds), and empties the queue.
      const owed = () => sql`SELECT count(*)::text AS n FROM store_erasures`.pipe(Effect.map((rows) => Schema.decodeUnknownSync(Count)(rows)[0]!.n))
      let remaining = yield* owed()
      for (let i = 0; i < 120 && remaining > 0; i++) {
        yield* Effect.sleep("500 millis")
        remaining = yield* owed()
      }
      expect(remaining).toBe(0)
    }), 120_000)
})
