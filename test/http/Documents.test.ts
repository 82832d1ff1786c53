/**
 * Document uploads over real HTTP: multipart in, one job per file, parsed by
 * the space's entity into memories that say where they came from; a file
 * that cannot be read fails its own job only; the documented limits (too
 * many files, a file too large, an upload too large, refused while the body
 * is still arriving); list, get and delete (the memories go too); scope;
 * isolation between organizations.
 */
import { expect } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import * as XLSX from "xlsx"
import { call, callRaw, createKey, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const fixture = (name: string) => readFileSync(join(import.meta.dirname, "../fixtures/documents", name))

const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "http://127.0.0.1")

interface Upload {
  readonly name: string
  readonly bytes: Uint8Array | string
  readonly type?: string
}

/** A multipart upload with the platform's own FormData, as a client would send it. */
const upload = (key: string, spaceId: string, files: ReadonlyArray<Upload>, fields: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    const form = new FormData()
    for (const file of files) {
      const bytes = typeof file.bytes === "string" ? new TextEncoder().encode(file.bytes) : file.bytes
      form.append("files", new Blob([bytes], { type: file.type ?? "application/octet-stream" }), file.name)
    }
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    const response = yield* Effect.promise(() =>
      fetch(`${base}/v1/spaces/${spaceId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
    )
    const text = yield* Effect.promise(() => response.text())
    return { status: response.status, body: JSON.parse(text), text }
  })

/** Polls a job until it has settled. */
const settled = (key: string, spaceId: string, jobId: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })
      expect(job.status, job.text).toBe(200)
      if (job.body.status !== "queued" && job.body.status !== "processing") return job.body
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`job ${jobId} did not settle`)
  })

const setup = Effect.gen(function*() {
  const owner = yield* signup()
  const key = (yield* createKey(owner.token)).raw_key
  const spaceId = `docs-${Date.now()}-${Math.floor(Math.random() * 1e6)}`
  const made = yield* call("POST", "/v1/spaces", { token: key, json: { space_id: spaceId } })
  expect(made.status, made.text).toBe(201)
  return { key, spaceId }
})

const spreadsheet = () => {
  const book = XLSX.utils.book_new()
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([["City", "Office lead"], ["Lisbon", "Marta"], ["Oslo", "Henrik"]]), "Offices")
  return new Uint8Array(XLSX.write(book, { type: "buffer", bookType: "xlsx" }))
}

eachProfile("document uploads", (it) => {
  it.effect("each file is its own job; chunks are recalled with where they came from; a bad file fails alone", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const markdown = "# Travel policy\n\n## Trains\n\nEmployees travelling to the Porto office take the Alfa Pendular train.\n"
      const reply = yield* upload(key, spaceId, [
        { name: "policy.md", bytes: markdown, type: "text/markdown" },
        { name: "offices.xlsx", bytes: spreadsheet() },
        { name: "report.pdf", bytes: fixture("text.pdf"), type: "application/pdf" },
        // Content, not the name, decides: a DOCX called notes.txt is read as a DOCX.
        { name: "notes.txt", bytes: fixture("sample.docx"), type: "text/plain" },
        { name: "broken.pdf", bytes: "%PDF-1.7\nthis is not really a PDF at all", type: "application/pdf" }
      ], { tags: "handbook,2024", user_id: "u-7" })
      expect(reply.status, reply.text).toBe(202)
      expect(reply.body).toEqual({ space_id: spaceId, job_ids: expect.any(Array) })
      expect(reply.body.job_ids).toHaveLength(5)
      const jobs = yield* Effect.forEach(reply.body.job_ids as Array<string>, (id) => settled(key, spaceId, id))
      const [md, xlsx, pdf, docx, broken] = jobs
      for (const job of [md, xlsx, pdf, docx]) {
        expect(job.status, JSON.stringify(job)).toBe("completed")
        expect(job.memory_ids.length).toBeGreaterThan(0)
        expect(job.document).toMatchObject({ stage: "completed", document_id: expect.stringMatching(/^doc_/) })
      }
      expect(md.document.filename).toBe("policy.md")
      expect(docx.document.format).toBe("docx")
      expect(broken.status).toBe("failed")
      expect(broken.error).toMatch(/broken\.pdf/)
      expect(broken.document.stage).toBe("failed")

      // The upload's scope is the memories' scope: recalled with the same user_id, not with another.
      const recall = (query: string, userId = "u-7") =>
        call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query, user_id: userId } })
      const train = yield* recall("Which train goes to the Porto office?")
      expect(train.status, train.text).toBe(200)
      const hit = train.body.results[0]
      expect(hit.content).toContain("Alfa Pendular")
      expect(hit.metadata).toMatchObject({ filename: "policy.md", format: "markdown", heading_path: ["Travel policy", "Trains"] })
      expect((yield* recall("Which train goes to the Porto office?", "someone-else")).body.results).toEqual([])

      // A table row keeps its header.
      const lead = yield* recall("Who leads the Oslo office?")
      const row = lead.body.results.find((r: { metadata: { filename?: string } }) => r.metadata.filename === "offices.xlsx")
      expect(row.content).toMatch(/City: Oslo/)
      expect(row.content).toMatch(/Office lead: Henrik/)
      expect(row.metadata).toMatchObject({ sheet: "Offices", format: "xlsx" })

      const page = yield* recall("Lisbon office opens")
      const pdfHit = page.body.results.find((r: { metadata: { filename?: string } }) => r.metadata.filename === "report.pdf")
      expect(pdfHit.metadata.page).toEqual(expect.any(Number))

      // The documents list: the four stored files, found again by a piece of their id.
      const list = yield* call("GET", `/v1/spaces/${spaceId}/documents`, { token: key })
      expect(list.status, list.text).toBe(200)
      expect(list.body).toMatchObject({ total: 4, limit: 100, offset: 0 })
      const policy = list.body.documents.find((d: { filename: string }) => d.filename === "policy.md")
      expect(policy).toMatchObject({
        document_id: md.document.document_id,
        source: "file",
        tags: ["handbook", "2024"],
        memory_count: md.memory_ids.length,
        text_length: expect.any(Number)
      })
      expect(policy.text_length).toBeGreaterThan(40)
      const found = yield* call("GET", `/v1/spaces/${spaceId}/documents?q=POLICY`, { token: key })
      expect(found.body.documents.map((d: { document_id: string }) => d.document_id)).toEqual([md.document.document_id])
      const paged = yield* call("GET", `/v1/spaces/${spaceId}/documents?limit=1&offset=1`, { token: key })
      expect(paged.body).toMatchObject({ total: 4, limit: 1, offset: 1 })
      expect(paged.body.documents).toHaveLength(1)
      // A plain write is a document of its own (source memory): `source` keeps the uploads apart from them.
      const written = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Henrik moved the Oslo office to Bjørvika." } })
      expect(written.status).toBe(200)
      const bySource = (source: string) => call("GET", `/v1/spaces/${spaceId}/documents?source=${source}`, { token: key })
      const files = yield* bySource("file")
      expect(files.body.total).toBe(4)
      expect(files.body.documents.every((d: { source: string }) => d.source === "file")).toBe(true)
      const writes = yield* bySource("memory")
      expect(writes.body.documents.map((d: { document_id: string }) => d.document_id)).toEqual([written.body.document_id])
      expect((yield* bySource("file,memory")).body.total).toBe(5)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/documents`, { token: key })).body.total).toBe(5)
      const refused = yield* bySource("upload")
      expect(refused.status).toBe(422)
      expect(refused.body.error.code).toBe("validation_error")

      const one = yield* call("GET", `/v1/spaces/${spaceId}/documents/${md.document.document_id}`, { token: key })
      expect(one.status).toBe(200)
      expect(one.body).toEqual(policy)

      // Deleting the document deletes its memories.
      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/documents/${md.document.document_id}`, { token: key })).status).toBe(204)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/documents/${md.document.document_id}`, { token: key })).status).toBe(404)
      expect((yield* call("DELETE", `/v1/spaces/${spaceId}/documents/${md.document.document_id}`, { token: key })).status).toBe(404)
      const gone = yield* recall("Which train goes to the Porto office?")
      expect(gone.body.results.map((r: { content: string }) => r.content).join(" ")).not.toContain("Alfa Pendular")
      const listed = yield* call("GET", `/v1/spaces/${spaceId}/memories?document_id=${md.document.document_id}`, { token: key })
      expect(listed.body.total).toBe(0)

      // A write with a document_id is a `custom` document, one without a `memory` one.
      yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Marta moved to Faro.", document_id: "my-doc" } })
      const custom = yield* call("GET", `/v1/spaces/${spaceId}/documents/my-doc`, { token: key })
      expect(custom.body).toMatchObject({ source: "custom", filename: null, memory_count: 1 })
    }))

  it.effect("limits: more than 20 files is too_many_files, no files is bad_request, svc: tags and unknown fields are 422", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const many = Array.from({ length: 21 }, (_, i) => ({ name: `f${i}.txt`, bytes: `file ${i}` }))
      const tooMany = yield* upload(key, spaceId, many)
      expect(tooMany.status).toBe(400)
      expect(tooMany.body.error.code).toBe("too_many_files")
      const none = yield* upload(key, spaceId, [], { tags: "a" })
      expect(none.status).toBe(400)
      expect(none.body.error.code).toBe("bad_request")
      const reserved = yield* upload(key, spaceId, [{ name: "a.txt", bytes: "hello there" }], { tags: "ok,svc:internal" })
      expect(reserved.status).toBe(422)
      expect(reserved.body.error.code).toBe("validation_error")
      const strategy = yield* upload(key, spaceId, [{ name: "a.txt", bytes: "hello there" }], { strategy: "everything" })
      expect(strategy.status).toBe(422)
      const unknown = yield* upload(key, spaceId, [{ name: "a.txt", bytes: "hello there" }], { colour: "blue" })
      expect(unknown.status).toBe(422)
      const json = yield* call("POST", `/v1/spaces/${spaceId}/documents`, { token: key, offContract: { files: [] } })
      expect(json.status).toBe(400)
      // Nothing of the refused uploads was queued.
      const list = yield* call("GET", `/v1/spaces/${spaceId}/documents`, { token: key })
      expect(list.body.total).toBe(0)
    }))

  it.effect("a file over 25 MB and an upload over 50 MB are refused while the body is still arriving", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const base = yield* baseUrl
      /** Streams `files` (sizes in MB) and reports the answer and how many bytes had been sent when it came. */
      const stream = (sizes: ReadonlyArray<number>) =>
        Effect.async<{ status: number; body: any; sentBeforeAnswer: number; total: number }>((resume) => {
          const boundary = "----engram-test-boundary"
          const url = new URL(`${base}/v1/spaces/${spaceId}/documents`)
          const chunk = Buffer.alloc(256 * 1024, 0x61)
          const total = sizes.reduce((n, s) => n + s * 1024 * 1024, 0)
          let sent = 0
          let answered = false
          const req = httpRequest({
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${boundary}` }
          })
          req.on("response", (res) => {
            const at = sent
            answered = true
            let text = ""
            res.on("data", (d) => (text += d))
            res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text), sentBeforeAnswer: at, total })))
          })
          req.on("error", () => {})
          const write = async () => {
            for (const [i, size] of sizes.entries()) {
              req.write(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="big${i}.txt"\r\nContent-Type: text/plain\r\n\r\n`)
              for (let n = 0; n < size * 4 && !answered; n++) {
                sent += chunk.length
                if (!req.write(chunk)) await new Promise((r) => req.once("drain", r))
              }
              if (answered) return
              req.write("\r\n")
            }
            req.end(`--${boundary}--\r\n`)
          }
          write().catch(() => {})
        })
      // Well past each limit, so a refusal that comes while the body is still arriving leaves much of it unsent even
      // on a busy machine, where the sender (this process) can fill the socket's buffers before it reads the answer.
      const big = yield* stream([60])
      expect(big.status).toBe(413)
      expect(big.body.error.code).toBe("file_too_large")
      expect(big.sentBeforeAnswer).toBeLessThan(big.total)
      const huge = yield* stream([20, 20, 20, 20])
      expect(huge.status).toBe(413)
      expect(huge.body.error.code).toBe("upload_too_large")
      expect(huge.sentBeforeAnswer).toBeLessThan(huge.total)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/documents`, { token: key })).body.total).toBe(0)
    }), { timeout: 120_000 })

  it.effect("another organization's space is 403; unknown documents are 404", () =>
    Effect.gen(function*() {
      const { key, spaceId } = yield* setup
      const uploaded = yield* upload(key, spaceId, [{ name: "secret.txt", bytes: "The vault code is kept by Ingrid." }])
      yield* settled(key, spaceId, uploaded.body.job_ids[0])
      const stranger = yield* signup("stranger")
      const theirs = (yield* createKey(stranger.token)).raw_key
      const paths = [`/v1/spaces/${spaceId}/documents`, `/v1/spaces/${spaceId}/entities`, `/v1/spaces/${spaceId}/graph`]
      for (const path of paths) {
        const reply = yield* callRaw("GET", path, { token: theirs })
        expect(reply.status, path).toBe(403)
        expect(reply.body.error.code).toBe("forbidden")
      }
      const theirUpload = yield* upload(theirs, spaceId, [{ name: "x.txt", bytes: "hello" }])
      expect(theirUpload.status).toBe(403)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/documents/doc_nope`, { token: key })).status).toBe(404)
      expect((yield* call("GET", `/v1/spaces/nowhere-${Date.now()}/documents`, { token: key })).status).toBe(404)
    }))
})
