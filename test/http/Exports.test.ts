/**
 * Exports and imports of a space through the real HTTP API: who may, the
 * NDJSON file (its header, every record), export -> import into a new space
 * -> export again giving the same file (the ids kept: the second space sits
 * beside the first in the same store), the imported space's index knowing the
 * memories, and a bad file failing its job with nothing imported. The scale
 * test (10,000 memories) runs on the embedded profile.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { request as httpRequest } from "node:http"
import { HttpServer } from "@effect/platform"
import { Embedder } from "../../services/embedder/Embedder.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { newMemoryId } from "../../services/store/MemoryRows.ts"
import { OrgId, SpaceId } from "../../src/domain/Ids.ts"
import { type Account, addMember, call, callRaw, createKey, signup } from "../support/Http.ts"
import { embedded } from "../support/Profiles.ts"
import { whereStored } from "../support/Leaks.ts"
import { eachProfile } from "../support/Suite.ts"
import { testNode } from "../support/TestNode.ts"

const NDJSON = { "content-type": "application/x-ndjson" }

const until = <A, R>(what: string, poll: Effect.Effect<A, never, R>, done: (a: A) => boolean, limit = Duration.seconds(90)) =>
  Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(limit)
    while (Date.now() < deadline) {
      const value = yield* poll
      if (done(value)) return value
      yield* Effect.sleep(Duration.millis(200))
    }
    return yield* Effect.dieMessage(`timed out waiting for ${what}`)
  })

/** Exports the space and downloads the file once the job completes: the job as listed, and the download. */
const exportSpace = (owner: Account, spaceId: string) =>
  Effect.gen(function*() {
    const created = yield* call("POST", `/v1/spaces/${spaceId}/exports`, { token: owner.token })
    expect(created.status, created.text).toBe(202)
    expect(created.body).toMatchObject({ status: "queued", space_id: spaceId })
    const jobId = created.body.job_id as string
    const job = yield* until(
      `export ${jobId}`,
      Effect.map(call("GET", `/v1/spaces/${spaceId}/exports`, { token: owner.token }), (r) => r.body.items.find((j: any) => j.job_id === jobId)),
      (j) => j?.status === "completed" || j?.status === "failed"
    )
    expect(job.status, job.error).toBe("completed")
    const file = yield* call("GET", `/v1/spaces/${spaceId}/exports/${jobId}/download`, { token: owner.token })
    expect(file.status).toBe(200)
    return { job, file, lines: file.text.trimEnd().split("\n").map((l) => JSON.parse(l)) }
  })

/** Imports `text` into the space; answers the finished job (GET .../jobs/{job_id}). */
const importInto = (owner: Account, spaceId: string, text: string) =>
  Effect.gen(function*() {
    const posted = yield* call("POST", `/v1/spaces/${spaceId}/imports`, { token: owner.token, raw: text, headers: NDJSON })
    expect(posted.status, posted.text).toBe(202)
    expect(posted.body).toMatchObject({ status: "queued", space_id: spaceId })
    return yield* until(
      `import ${posted.body.job_id}`,
      Effect.map(call("GET", `/v1/spaces/${spaceId}/jobs/${posted.body.job_id}`, { token: owner.token }), (r) => r.body),
      (job) => job.status === "completed" || job.status === "failed" || job.status === "cancelled"
    )
  })

/** Two export files hold the same records: equal line for line after the header (a failure shows the first difference only). */
const expectSameRecords = (a: string, b: string) => {
  const left = a.split("\n").slice(1)
  const right = b.split("\n").slice(1)
  const first = left.findIndex((line, i) => line !== right[i])
  expect(first === -1 ? null : { line: first + 2, a: left[first], b: right[first] }).toBeNull()
  expect(right.length).toBe(left.length)
}

const createSpace = (token: string, spaceId: string) =>
  Effect.gen(function*() {
    const created = yield* call("POST", "/v1/spaces", { token, json: { space_id: spaceId } })
    expect(created.status, created.text).toBe(201)
  })

const memoryIds = (token: string, spaceId: string) =>
  Effect.map(call("GET", `/v1/spaces/${spaceId}/memories?state=all&prefer_observations=false&limit=1000`, { token }), (r) => r.body)

const retrieveIds = (token: string, spaceId: string, query: string) =>
  Effect.map(
    call("POST", "/v1/retrieve", { token, json: { space_id: spaceId, query, limit: 20, prefer_observations: false } }),
    (r) => (r.body.results ?? []).map((m: any) => m.memory_id as string)
  )

/** A POST whose Content-Length promises more than the limit: the answer comes before the body. */
const declaredTooLarge = (port: number, path: string, token: string) =>
  Effect.async<{ status: number; body: any }>((resume) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      headers: { authorization: `Bearer ${token}`, ...NDJSON, "content-length": String(600 * 1024 * 1024) }
    }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body: JSON.parse(text) })))
    })
    req.on("error", () => {})
    req.write("{\"kind\":\"header\"}\n")
  })

const serverPort = (server: HttpServer.HttpServer) => (server.address._tag === "TcpAddress" ? server.address.port : 0)

eachProfile("exports and imports", (it) => {
  it.effect("need an owner or admin on a session; missing, foreign and non-empty spaces are refused", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const member = yield* addMember(owner, "member")
      const admin = yield* addMember(owner, "admin")
      const spaceId = `exp-roles-${Date.now()}`
      yield* createSpace(owner.token, spaceId)
      const routes = [
        ["POST", `/v1/spaces/${spaceId}/exports`],
        ["GET", `/v1/spaces/${spaceId}/exports`],
        ["GET", `/v1/spaces/${spaceId}/exports/job_x/download`],
        ["POST", `/v1/spaces/${spaceId}/imports`],
        ["GET", `/v1/spaces/${spaceId}/imports`]
      ] as const
      for (const [method, path] of routes) {
        const body = path.endsWith("/imports") && method === "POST" ? { raw: "x", headers: NDJSON } : {}
        const viaKey = yield* callRaw(method, path, { token: key, ...body })
        expect(viaKey.status, `${method} ${path}`).toBe(401)
        expect(viaKey.body.error.code).toBe("session_required")
        const viaMember = yield* callRaw(method, path, { token: member.token, ...body })
        expect(viaMember.status, `${method} ${path}`).toBe(403)
        expect(viaMember.body.error.code).toBe("insufficient_role")
      }
      // The routes are in the OpenAPI document.
      const paths = Object.keys((yield* callRaw("GET", "/openapi.json")).body.paths)
      expect(paths).toEqual(expect.arrayContaining([
        "/v1/spaces/{space_id}/exports",
        "/v1/spaces/{space_id}/exports/{job_id}/download",
        "/v1/spaces/{space_id}/imports"
      ]))
      // An admin may; an unknown job is 404.
      expect((yield* call("GET", `/v1/spaces/${spaceId}/exports`, { token: admin.token })).body).toMatchObject({ items: [], total: 0 })
      const unknownJob = yield* call("GET", `/v1/spaces/${spaceId}/exports/job_nothere/download`, { token: admin.token })
      expect(unknownJob.status).toBe(404)
      expect(unknownJob.body.error.code).toBe("not_found")

      const missing = yield* call("POST", "/v1/spaces/no-such-space/exports", { token: owner.token })
      expect(missing.status).toBe(404)
      expect(missing.body.error.code).toBe("not_found")
      const missingImport = yield* call("POST", "/v1/spaces/no-such-space/imports", { token: owner.token, raw: "x", headers: NDJSON })
      expect(missingImport.status).toBe(404)
      const stranger = yield* signup("stranger")
      const foreign = yield* call("POST", `/v1/spaces/${spaceId}/exports`, { token: stranger.token })
      expect(foreign.status).toBe(403)
      expect(foreign.body.error.code).toBe("forbidden")

      // Not NDJSON, nothing, or more than the limit.
      const wrongType = yield* call("POST", `/v1/spaces/${spaceId}/imports`, { token: owner.token, raw: "x", headers: { "content-type": "image/png" } })
      expect(wrongType.status).toBe(400)
      expect(wrongType.body.error.code).toBe("bad_request")
      const empty = yield* call("POST", `/v1/spaces/${spaceId}/imports`, { token: owner.token, raw: "", headers: NDJSON })
      expect(empty.status).toBe(400)
      const tooLarge = yield* declaredTooLarge(serverPort(yield* HttpServer.HttpServer), `/v1/spaces/${spaceId}/imports`, owner.token)
      expect(tooLarge.status).toBe(413)
      expect(tooLarge.body.error.code).toBe("payload_too_large")
      expect(tooLarge.body.error.request_id).toMatch(/\S/)
      expect((yield* call("GET", `/v1/spaces/${spaceId}/imports`, { token: owner.token })).body.total).toBe(0)

      // A space holding memories takes no import.
      const recorded = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Ada keeps bees on the roof." } })
      expect(recorded.status).toBe(200)
      const { file } = yield* exportSpace(owner, spaceId)
      expect(file.headers["content-type"]).toContain("application/x-ndjson")
      const full = yield* call("POST", `/v1/spaces/${spaceId}/imports`, { token: owner.token, raw: file.text, headers: NDJSON })
      expect(full.status).toBe(409)
      expect(full.body.error.code).toBe("conflict")
    }))

  it.effect("export, import into a new space and export again give the same file; ids, times, history and scopes kept", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const source = `exp-src-${Date.now()}`
      const target = `exp-dst-${Date.now()}`
      yield* createSpace(owner.token, source)
      const record = (content: string, extra: Record<string, unknown> = {}) =>
        Effect.map(call("POST", "/v1/record", { token: key, json: { space_id: source, content, ...extra } }), (r) => {
          expect(r.status, r.text).toBe(200)
          return r.body.memories.map((m: any) => m.memory_id as string)
        })
      const [pottery] = yield* record("Zara signed up for a pottery class on Mondays.", {
        user_id: "zara",
        agent_id: "coach",
        session_id: "s1",
        tags: ["hobby"],
        metadata: { source: "chat", nested: { level: 2 } },
        context: "weekly check-in",
        timestamp: "2024-03-01T10:00:00Z"
      })
      yield* record("Zara's favourite colour is teal.", { user_id: "zara" })
      const [cello] = yield* record("Omar started learning the cello in January.", { user_id: "omar", session_id: "s2" })
      yield* record("The team offsite will be held in Lisbon.")
      // A history: an edit and a retirement.
      expect((yield* call("PATCH", `/v1/spaces/${source}/memories/${pottery}`, {
        token: key,
        json: { text: "Zara takes a pottery class on Monday evenings.", tags: ["hobby", "weekly"] }
      })).status).toBe(200)
      expect((yield* call("PATCH", `/v1/spaces/${source}/memories/${cello}`, { token: key, json: { state: "retired" } })).status).toBe(200)
      // Settings documents come along.
      expect((yield* call("PUT", `/v1/spaces/${source}/profile`, {
        token: owner.token,
        json: { mission: "Help Zara with her hobbies", disposition: { skepticism: 4, literalism: 2, empathy: 5 } }
      })).status).toBe(200)
      // Consolidation settles the facts before the export, so neither space changes afterwards.
      yield* until(
        "consolidation",
        Effect.map(call("GET", `/v1/spaces/${source}/consolidation`, { token: key }), (r) => r.body),
        (status) => status.pending_facts === 0 && status.runs.length > 0
      )
      // A memory model, refreshed once (by the offline engine).
      const model = yield* call("POST", `/v1/spaces/${source}/models`, { token: key, json: { name: "Zara", query: "What does Zara do?" } })
      expect(model.status, model.text).toBe(202)
      yield* until(
        "the model's refresh",
        Effect.map(call("GET", `/v1/spaces/${source}/jobs/${model.body.job_id}`, { token: key }), (r) => r.body),
        (job) => job.status === "completed" || job.status === "failed"
      )

      const first = yield* exportSpace(owner, source)
      expect(first.file.headers["content-type"]).toContain("application/x-ndjson")
      const [header, ...records] = first.lines
      expect(header).toMatchObject({ kind: "header", format: "engram.space-export", version: 1, space_id: source })
      expect(Date.parse(header.exported_at)).not.toBeNaN()
      expect(header.embedding_model).toMatch(/\S/)
      const end = records[records.length - 1]
      const memories = records.filter((l: any) => l.kind === "memory")
      expect(end).toEqual({
        kind: "end",
        counts: {
          memories: memories.length,
          documents: records.filter((l: any) => l.kind === "document").length,
          memory_models: 1,
          // Omar's only memory is retired: his profile is empty.
          user_profiles: 1,
          settings: 1
        }
      })
      expect(first.job).toMatchObject({ item_count: records.length - 1, bytes: Buffer.byteLength(first.file.text) })
      expect(Date.parse(first.job.completed_at)).not.toBeNaN()
      // Every field of a memory, its history and its embedding model.
      const edited = memories.find((m: any) => m.id === pottery)
      expect(edited).toMatchObject({
        text: "Zara takes a pottery class on Monday evenings.",
        user_id: "zara",
        agent_id: "coach",
        session_id: "s1",
        context: "weekly check-in",
        metadata: { source: "chat", nested: { level: 2 } },
        tags: ["hobby", "weekly"],
        event_time: "2024-03-01T10:00:00.000Z",
        embedding_model: header.embedding_model
      })
      expect(edited.embedding).toMatch(/^[A-Za-z0-9+/]+=*$/)
      expect(edited.history.map((h: any) => h.change)).toEqual(["created", "edited"])
      expect(edited.history[1].previous.text).toBe("Zara signed up for a pottery class on Mondays.")
      expect(memories.find((m: any) => m.id === cello).history.map((h: any) => h.change)).toEqual(["created", "retired"])
      expect(edited.consolidated_at).not.toBeNull()
      expect(records.find((l: any) => l.kind === "memory_model")).toMatchObject({ name: "Zara", query: "What does Zara do?" })
      expect(records.find((l: any) => l.kind === "user_profile" && l.user_id === "zara")).toMatchObject({ memory_count: expect.any(Number) })
      expect(records.find((l: any) => l.kind === "settings")).toMatchObject({ setting: "profile", value: { mission: "Help Zara with her hobbies" } })

      // The new space's index is live before the import: the import reloads it.
      yield* createSpace(owner.token, target)
      expect(yield* retrieveIds(key, target, "Zara pottery class")).toEqual([])
      const job = yield* importInto(owner, target, first.file.text)
      expect(job.status, job.error).toBe("completed")
      expect(job.error).toBeNull()
      const imports = (yield* call("GET", `/v1/spaces/${target}/imports`, { token: owner.token })).body
      expect(imports.items[0]).toMatchObject({
        job_id: job.job_id,
        status: "completed",
        item_count: records.length - 1,
        bytes: Buffer.byteLength(first.file.text),
        reembedded: 0,
        redacted: 0
      })
      expect(yield* retrieveIds(key, target, "Zara pottery class")).toContain(pottery)

      // Same memories (same ids) in both spaces, with their times, scopes and histories.
      const before = yield* memoryIds(key, source)
      const after = yield* memoryIds(key, target)
      expect(after.total).toBe(before.total)
      expect(after.items).toEqual(before.items)
      const historyOf = (spaceId: string) => Effect.map(call("GET", `/v1/spaces/${spaceId}/memories/${pottery}/history`, { token: key }), (r) => r.body)
      expect(yield* historyOf(target)).toEqual(yield* historyOf(source))
      expect((yield* call("GET", `/v1/spaces/${target}/profile`, { token: key })).body.mission).toBe("Help Zara with her hobbies")

      const second = yield* exportSpace(owner, target)
      expect(second.lines[0]).toMatchObject({ kind: "header", space_id: target, embedding_model: header.embedding_model })
      expectSameRecords(first.file.text, second.file.text)

      // Deleting a memory in one space leaves its namesake in the other alone.
      expect((yield* call("DELETE", `/v1/spaces/${source}/memories/${pottery}`, { token: key })).status).toBe(204)
      expect((yield* call("GET", `/v1/spaces/${target}/memories/${pottery}/history`, { token: key })).status).toBe(200)
      expect(yield* retrieveIds(key, target, "Zara pottery class")).toContain(pottery)
    }))

  it.effect("a malformed, cut-short or blocked file fails its job naming the line, and nothing is imported", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const key = (yield* createKey(owner.token)).raw_key
      const source = `exp-bad-src-${Date.now()}`
      const target = `exp-bad-dst-${Date.now()}`
      yield* createSpace(owner.token, source)
      for (const content of ["Maya runs the night market stall.", "Reach Maya at maya@example.com about SECRET-4242.", "Hugo repairs bicycles."]) {
        expect((yield* call("POST", "/v1/record", { token: key, json: { space_id: source, content } })).status).toBe(200)
      }
      const { file, lines } = yield* exportSpace(owner, source)
      yield* createSpace(owner.token, target)
      expect(yield* retrieveIds(key, target, "Maya market")).toEqual([])
      const text = file.text.trimEnd().split("\n")
      const nothingImported = Effect.gen(function*() {
        expect((yield* memoryIds(key, target)).total).toBe(0)
        expect(yield* retrieveIds(key, target, "Maya market")).toEqual([])
      })

      const broken = [...text.slice(0, 2), "{\"kind\":\"memory\",", ...text.slice(2)].join("\n")
      const malformed = yield* importInto(owner, target, broken)
      expect(malformed.status).toBe("failed")
      expect(malformed.error).toContain("line 3")
      yield* nothingImported

      const wrongField = [...text.slice(0, 2), JSON.stringify({ ...lines[2], position: "first" }), ...text.slice(3)].join("\n")
      const invalid = yield* importInto(owner, target, wrongField)
      expect(invalid.status).toBe("failed")
      expect(invalid.error).toMatch(/line 3: memory field position/)
      yield* nothingImported

      const cut = yield* importInto(owner, target, text.slice(0, -1).join("\n"))
      expect(cut.status).toBe("failed")
      expect(cut.error).toContain("cut short")
      yield* nothingImported

      // The target space's rules apply: a block names the line and the detector, never the text.
      const blocking = yield* call("POST", `/v1/spaces/${target}/rules`, { token: owner.token, json: { name: "No emails", detector: "email", action: "block" } })
      expect(blocking.status, blocking.text).toBe(201)
      const blocked = yield* importInto(owner, target, file.text)
      expect(blocked.status).toBe("failed")
      const emailLine = text.findIndex((l) => l.includes("maya@example.com")) + 1
      expect(blocked.error).toContain(`line ${emailLine}: blocked by the space's rule "No emails" (detector email)`)
      expect(blocked.error).not.toContain("maya@example.com")
      yield* nothingImported

      // Redaction: the secret is replaced in the memory (and its vector recomputed from the redacted text).
      expect((yield* call("DELETE", `/v1/spaces/${target}/rules/${blocking.body.id}`, { token: owner.token })).status).toBe(204)
      expect((yield* call("POST", `/v1/spaces/${target}/rules`, {
        token: owner.token,
        json: { name: "Secrets", detector: "regex", pattern: "SECRET-[0-9]+", action: "redact" }
      })).status).toBe(201)
      const redacted = yield* importInto(owner, target, file.text)
      expect(redacted.status, redacted.error).toBe("completed")
      const imported = (yield* memoryIds(key, target)).items
      expect(imported).toHaveLength(3)
      expect(imported.map((m: any) => m.text).join(" ")).toContain("[REDACTED:regex]")
      expect(imported.map((m: any) => m.text).join(" ")).not.toContain("SECRET-4242")
      const listed = (yield* call("GET", `/v1/spaces/${target}/imports`, { token: owner.token })).body.items[0]
      expect(listed).toMatchObject({ status: "completed", redacted: 1, reembedded: 1 })
      expect(yield* retrieveIds(key, target, "Maya market")).not.toEqual([])
      const again = yield* exportSpace(owner, target)
      expect(again.file.text).not.toContain("SECRET-4242")
      // Once the source space is gone, the secret is nowhere in the database: not in the imported memories, their
      // history or the uploaded file, which is dropped when its import settles.
      expect((yield* whereStored(["SECRET-4242"])).some((column) => column.startsWith("public.memories."))).toBe(true)
      expect((yield* call("DELETE", `/v1/spaces/${source}`, { token: key })).status).toBe(204)
      expect(yield* whereStored(["SECRET-4242"])).toEqual([])
    }))
})

/**
 * 10,000 memories written straight to the store (as the space's writer stores them, vectors included), then
 * exported, imported and exported again; the phases' times are printed. EXPORT_SCALE_MEMORIES sets another count.
 */
layer(testNode(embedded.infrastructure(), { consolidation: false }), { excludeTestServices: true, timeout: Duration.minutes(2) })(
  "exports and imports at scale [embedded (PGlite + in-process cache)]",
  (it) => {
    it.effect("10,000 memories survive an export, an import and a second export unchanged", () =>
      Effect.gen(function*() {
        const total = Number(process.env.EXPORT_SCALE_MEMORIES ?? 10_000)
        const owner = yield* signup()
        const key = (yield* createKey(owner.token)).raw_key
        const source = `scale-src-${Date.now()}`
        const target = `scale-dst-${Date.now()}`
        yield* createSpace(owner.token, source)
        const embedder = yield* Embedder
        const repo = yield* MemoryRepo
        const space = { orgId: OrgId.make(owner.orgId), spaceId: SpaceId.make(source) }
        const NAMES = ["Ava", "Ben", "Caro", "Dev", "Elif", "Farid", "Gina", "Hugo"]
        const THINGS = ["a lighthouse", "the old bridge", "a rescue dog", "vintage bicycles", "lentil soup", "jazz records"]
        const started = Date.now()
        for (let i = 0; i < total; i += 500) {
          const texts = Array.from({ length: 500 }, (_, j) => `${NAMES[(i + j) % 8]} talked about ${THINGS[(i + j) % 6]} on day ${i + j}.`)
          const vectors = yield* embedder.embed(texts)
          yield* repo.transaction(repo.insertDocuments(space, texts.map((text, j) => ({
            document: { documentId: `doc_${i + j}`, source: "memory" as const, textLength: text.length, tags: [] },
            memories: [{
              id: newMemoryId(`scale${i + j}`),
              text,
              sourceText: text,
              context: "",
              type: "fact" as const,
              state: "active" as const,
              entities: [{ name: NAMES[(i + j) % 8]!, kind: "person" }],
              metadata: { n: i + j },
              tags: [],
              userId: `user-${(i + j) % 50}`,
              agentId: null,
              sessionId: null,
              memberId: null,
              eventTime: new Date(Date.UTC(2024, 0, 1) + (i + j) * 60_000),
              occurredStart: null,
              occurredEnd: null,
              embedding: vectors[j]!,
              embedder: embedder.id
            }]
          })), i, new Date(Date.UTC(2024, 5, 1) + i)))
        }
        const written = Date.now()

        const first = yield* exportSpace(owner, source)
        expect(first.job.item_count).toBe(total * 2 + Math.min(50, total))
        const exported = Date.now()
        yield* createSpace(owner.token, target)
        expect(yield* retrieveIds(key, target, "talked about")).toEqual([])
        const job = yield* importInto(owner, target, first.file.text)
        expect(job.status, job.error).toBe("completed")
        const imported = Date.now()
        const second = yield* exportSpace(owner, target)
        const reexported = Date.now()
        expectSameRecords(first.file.text, second.file.text)
        // The target's index was loaded (empty) before the import and knows every imported memory after it.
        const probe = Math.min(1234, total - 1)
        const probeText = `${NAMES[probe % 8]} talked about ${THINGS[probe % 6]} on day ${probe}.`
        expect(yield* retrieveIds(key, target, probeText)).toContain(`mem_scale${probe}`)
        console.log(`scale: ${total} memories, file ${(first.file.text.length / 1024 / 1024).toFixed(1)} MiB; written ${
          written - started
        } ms, export ${exported - written} ms, import ${imported - exported} ms, re-export ${reexported - imported} ms`)
      }).pipe(Effect.provide(MemoryRepo.Default)), { timeout: 600_000 })
  }
)
