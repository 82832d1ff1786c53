/**
 * What the document and graph endpoints do. An upload is read as a stream:
 * each file goes to a temporary file as it arrives, counted against the
 * per-file and per-upload limits (refused the moment one is crossed), and
 * only a whole, valid upload is stored: one job per file, the file's bytes
 * in parts, in one transaction. The space's entity parses them afterwards.
 * Lists and the graph are read from the store; deleting a document is a
 * change to the space, so its entity makes it.
 */
import { HttpServerRequest, type Multipart } from "@effect/platform"
import { Clock, Effect, Option, Stream } from "effect"
import { mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  type DocumentListQuery,
  DocumentStrategy,
  type GraphQuery,
  MAX_FILE_BYTES,
  MAX_FILES,
  MAX_UPLOAD_BYTES
} from "../domain/Documents.ts"
import { BadRequest, FileTooLarge, NotFound, ServiceUnavailable, TooManyFiles, UploadTooLarge, ValidationError } from "../domain/Errors.ts"
import { isSafeText } from "../domain/SafeText.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { lingerThenClose } from "../http/BodyGuard.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { DocumentRepo, PART_BYTES } from "../../services/store/DocumentRepo.ts"
import { GraphRepo } from "../../services/store/GraphRepo.ts"
import { type DocumentRequest, JobRepo } from "../../services/store/JobRepo.ts"
import { MemoryRepo } from "../../services/store/MemoryRepo.ts"
import { reachable } from "../space/MemoryService.ts"
import { spaceRef } from "../domain/Ids.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { Metering } from "../metering/Metering.ts"
import { RATES } from "../metering/Rates.ts"

const FIELDS = new Set(["tags", "user_id", "agent_id", "session_id", "strategy"])
const MB = 1024 * 1024

/** A file of the upload, spooled to disk while the request is read. */
interface Spooled {
  readonly path: string
  readonly filename: string
  readonly contentType: string | null
  readonly size: number
}

/** A document id a person can find again with `q`: the file's name, made safe, and a random suffix. */
export const documentIdFor = (filename: string) => {
  const stem = filename.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60)
  return `doc_${stem === "" ? "" : `${stem}_`}${randomBase62(10)}`
}

/** The upload's scope and options, from its form fields; anything malformed is a 422. */
const readFields = (fields: ReadonlyMap<string, string>) =>
  Effect.gen(function*() {
    const invalid = (message: string) => new ValidationError({ message })
    const tags = (fields.get("tags") ?? "").split(",").map((t) => t.trim()).filter((t) => t !== "")
    for (const tag of tags) {
      if (tag.toLowerCase().startsWith("svc:")) return yield* invalid(`tags: ${tag} uses the reserved prefix svc:`)
      if (tag.length > 100) return yield* invalid("tags: each tag is at most 100 characters")
    }
    if (tags.length > 50) return yield* invalid("tags: at most 50 tags")
    const scope = (key: string) => {
      const value = fields.get(key)?.trim()
      if (value === undefined || value === "") return Effect.succeed(null)
      return value.length > 256 ? Effect.fail(invalid(`${key}: at most 256 characters`)) : Effect.succeed(value)
    }
    const strategy = fields.get("strategy")?.trim() || "chunks"
    if (!DocumentStrategy.literals.some((s) => s === strategy)) {
      return yield* invalid(`strategy: expected one of ${DocumentStrategy.literals.join(", ")}, got ${JSON.stringify(strategy.slice(0, 40))}`)
    }
    return {
      tags,
      userId: yield* scope("user_id"),
      agentId: yield* scope("agent_id"),
      sessionId: yield* scope("session_id"),
      strategy: DocumentStrategy.literals.find((s) => s === strategy) ?? "chunks"
    }
  })

const multipartFailure = (error: Multipart.MultipartError) => {
  switch (error.reason) {
    case "FieldTooLarge":
      return new ValidationError({ message: "a form field is larger than 64 KB" })
    case "TooManyParts":
      return new TooManyFiles({ message: `at most ${MAX_FILES} files per upload` })
    case "InternalError":
      return new ServiceUnavailable({ message: "the upload could not be read; retry" })
    default:
      return new BadRequest({ message: "the body is not readable multipart/form-data with a `files` field" })
  }
}

export class Documents extends Effect.Service<Documents>()("engram/documents/Documents", {
  dependencies: [Spaces.Default, DocumentRepo.Default, GraphRepo.Default, JobRepo.Default, MemoryRepo.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const metering = yield* Metering
    const spaces = yield* Spaces
    const documents = yield* DocumentRepo
    const graph = yield* GraphRepo
    const jobs = yield* JobRepo
    const memories = yield* MemoryRepo
    const entity = yield* SpaceEntity.client

    /** Reads the multipart stream into temporary files under `dir`, enforcing every limit as bytes arrive. */
    const spool = (parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>, dir: string) =>
      Effect.gen(function*() {
        const files: Array<Spooled> = []
        const fields = new Map<string, string>()
        let total = 0
        yield* parts.pipe(
          Stream.mapError(multipartFailure),
          Stream.runForEach((part) =>
            Effect.gen(function*() {
              if (part._tag === "Field") {
                if (!FIELDS.has(part.key)) return yield* new ValidationError({ message: `${part.key.slice(0, 60)}: is not a known field` })
                if (!isSafeText(part.value)) return yield* new ValidationError({ message: `${part.key}: must be valid text` })
                fields.set(part.key, part.value)
                return
              }
              if (part.key !== "files") {
                return yield* new ValidationError({ message: `${part.key.slice(0, 60)}: files are sent in the \`files\` field` })
              }
              if (files.length === MAX_FILES) return yield* new TooManyFiles({ message: `at most ${MAX_FILES} files per upload` })
              const path = join(dir, String(files.length))
              const handle = yield* Effect.promise(() => open(path, "w"))
              let size = 0
              yield* part.content.pipe(
                Stream.mapError(multipartFailure),
                Stream.runForEach((chunk) =>
                  Effect.gen(function*() {
                    size += chunk.length
                    total += chunk.length
                    if (size > MAX_FILE_BYTES) {
                      return yield* new FileTooLarge({ message: `${part.name.slice(0, 100)} is larger than ${MAX_FILE_BYTES / MB} MB` })
                    }
                    if (total > MAX_UPLOAD_BYTES) {
                      return yield* new UploadTooLarge({ message: `the upload is larger than ${MAX_UPLOAD_BYTES / MB} MB in all` })
                    }
                    yield* Effect.promise(() => handle.write(chunk))
                  })
                ),
                Effect.ensuring(Effect.promise(() => handle.close()))
              )
              const filename = part.name.trim() === "" ? `file-${files.length + 1}` : part.name.trim().slice(0, 255)
              const contentType = part.contentType.trim() === "" ? null : part.contentType.trim().slice(0, 200)
              files.push({ path, filename, contentType, size })
            })
          )
        )
        return { files, fields }
      })

    /** A file's bytes into the store, one part at a time (never more than PART_BYTES of it in memory). */
    const storeFile = (jobId: string, file: Spooled) =>
      Effect.gen(function*() {
        const handle = yield* Effect.promise(() => open(file.path, "r"))
        yield* Effect.gen(function*() {
          for (let part = 0, offset = 0; offset < file.size || (part === 0 && file.size === 0); part++) {
            const buffer = Buffer.alloc(Math.min(PART_BYTES, file.size - offset))
            yield* Effect.promise(() => handle.read(buffer, 0, buffer.length, offset))
            yield* documents.putPart(jobId, part, buffer)
            offset += buffer.length
            if (file.size === 0) break
          }
        }).pipe(Effect.ensuring(Effect.promise(() => handle.close())))
      })

    const upload = Effect.fn("Documents.upload")(function*(
      principal: PrincipalShape,
      spaceId: string,
      parts: Stream.Stream<Multipart.Part, Multipart.MultipartError>
    ) {
      const request = yield* HttpServerRequest.HttpServerRequest
      const contentType = (request.headers["content-type"] ?? "").toLowerCase()
      if (!contentType.startsWith("multipart/form-data")) {
        return yield* new BadRequest({ message: "upload files as multipart/form-data in the `files` field" })
      }
      // Admitted while credits remain; a file's memories are debited when it is parsed and stored.
      yield* metering.requireCredits(principal.orgId, RATES.memory_stored)
      yield* spaces.ensure(principal, spaceId)
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "engram-upload-")))
      return yield* Effect.gen(function*() {
        const { fields, files } = yield* spool(parts, dir).pipe(
          // A refused upload is answered at once; the rest of its body is read and dropped, then the connection closed.
          Effect.tapError(() => lingerThenClose(request.source))
        )
        if (files.length === 0) return yield* new BadRequest({ message: "files: at least one file is required" })
        const options = yield* readFields(fields)
        const now = yield* Clock.currentTimeMillis
        const space = spaceRef(principal, spaceId)
        const queued = files.map((file) => {
          const document: DocumentRequest = {
            documentId: documentIdFor(file.filename),
            filename: file.filename,
            contentType: file.contentType,
            size: file.size,
            strategy: options.strategy,
            tags: options.tags,
            userId: options.userId,
            agentId: options.agentId,
            sessionId: options.sessionId,
            memberId: principal.credential._tag === "Session" ? principal.userId : null,
            eventTime: new Date(now).toISOString()
          }
          return { jobId: `job_${randomBase62(20)}`, request: document, file }
        })
        yield* memories.transaction(Effect.gen(function*() {
          yield* jobs.createDocuments(space, queued, new Date(now))
          for (const { file, jobId } of queued) yield* storeFile(jobId, file)
        }))
        yield* Effect.annotateCurrentSpan({ files: files.length, bytes: files.reduce((n, f) => n + f.size, 0) })
        // The jobs are durable already; a lost wake is caught by the waker.
        yield* entity(spaceEntityId(space)).Wake(undefined, { discard: true }).pipe(
          Effect.catchAll((e) => Effect.logWarning("wake not delivered; the upload is parsed at the waker's next round", e))
        )
        return { space_id: spaceId, job_ids: queued.map((q) => q.jobId) }
      }).pipe(Effect.ensuring(Effect.promise(() => rm(dir, { recursive: true, force: true }))))
    })

    const notFound = (what: string) => () => Effect.fail(new NotFound({ message: `${what} not found` }))

    return {
      upload,

      list: (principal: PrincipalShape, spaceId: string, query: DocumentListQuery) =>
        Effect.zipRight(spaces.get(principal, spaceId), documents.list(spaceRef(principal, spaceId), query)),

      get: (principal: PrincipalShape, spaceId: string, documentId: string) =>
        spaces.get(principal, spaceId).pipe(
          Effect.zipRight(documents.find(spaceRef(principal, spaceId), documentId)),
          Effect.flatMap(Option.match({ onNone: notFound(`document ${documentId}`), onSome: Effect.succeed }))
        ),

      remove: (principal: PrincipalShape, spaceId: string, documentId: string) =>
        spaces.get(principal, spaceId).pipe(
          Effect.zipRight(entity(spaceEntityId(spaceRef(principal, spaceId))).DeleteDocument({ documentId }).pipe(
            Effect.catchTags(reachable),
            Effect.catchTag("SpaceMissing", () => spaces.missing(principal.orgId, spaceId))
          )),
          Effect.flatMap((deleted) => (deleted ? Effect.void : notFound(`document ${documentId}`)()))
        ),

      entities: (principal: PrincipalShape, spaceId: string, page: { readonly limit: number; readonly offset: number }) =>
        Effect.zipRight(spaces.get(principal, spaceId), graph.entities(spaceRef(principal, spaceId), page.limit, page.offset)),

      entity: (principal: PrincipalShape, spaceId: string, entityId: string) =>
        spaces.get(principal, spaceId).pipe(
          Effect.zipRight(graph.entity(spaceRef(principal, spaceId), entityId)),
          Effect.flatMap(Option.match({ onNone: notFound(`entity ${entityId}`), onSome: Effect.succeed }))
        ),

      graph: (principal: PrincipalShape, spaceId: string, query: GraphQuery) =>
        Effect.zipRight(spaces.get(principal, spaceId), graph.graph(spaceRef(principal, spaceId), query.limit, query.min_count))
    }
  })
}) {}
