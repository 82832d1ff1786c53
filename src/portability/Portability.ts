/**
 * What the export and import endpoints do, for owners and admins of the
 * space's organization on a session. Both are jobs the space's entity runs
 * (the request only queues one and wakes the entity; a lost wake is caught
 * by the waker). A download streams the stored file a part at a time.
 */
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Chunk, Clock, Effect, Option, Stream } from "effect"
import { IncomingMessage } from "node:http"
import { BadRequest, Conflict, NotFound, PayloadTooLarge, type ServiceUnavailable } from "../domain/Errors.ts"
import { spaceRef, type SpaceRef } from "../domain/Ids.ts"
import { type PrincipalShape, requireRole, requireSession } from "../domain/Principal.ts"
import { type ExportJob, type ImportJob, MAX_IMPORT_BYTES, NDJSON } from "../domain/PortabilityApi.ts"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { lingerThenClose } from "../http/BodyGuard.ts"
import { Metering } from "../metering/Metering.ts"
import { RATES } from "../metering/Rates.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { type PortabilityJob, PortabilityRepo } from "../../services/store/PortabilityRepo.ts"
import { storeImport } from "./Upload.ts"

/** What an import body may be labelled: NDJSON under its usual names, plain text, bytes, or nothing. */
const IMPORT_TYPES = new Set(["", NDJSON, "application/jsonl", "application/json-lines", "application/x-jsonlines", "text/plain", "application/octet-stream"])

const MB = 1024 * 1024

const exportView = (job: PortabilityJob): ExportJob => ({
  job_id: job.jobId,
  status: job.status,
  created_at: job.createdAt.toISOString(),
  completed_at: job.status === "completed" ? job.progress?.completed_at ?? null : null,
  item_count: job.progress?.item_count ?? 0,
  bytes: job.status === "completed" ? job.progress?.bytes ?? 0 : 0,
  error: job.error
})

const importView = (job: PortabilityJob): ImportJob => ({
  ...exportView(job),
  bytes: job.uploaded,
  reembedded: job.progress?.reembedded ?? 0,
  redacted: job.progress?.redacted ?? 0
})

/** A file name for the download that no header can choke on. */
const fileName = (spaceId: string, jobId: string) => `${spaceId}-${jobId}`.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 200)

export class Portability extends Effect.Service<Portability>()("engram/portability/Portability", {
  dependencies: [Spaces.Default, PortabilityRepo.Default, Metering.Default],
  effect: Effect.gen(function*() {
    const spaces = yield* Spaces
    const jobs = yield* PortabilityRepo
    const metering = yield* Metering
    const entity = yield* SpaceEntity.client

    /** The caller's own space, for an owner or admin on a session (401, 403 or 404 otherwise). */
    const managed = (principal: PrincipalShape, spaceId: string) =>
      requireSession.pipe(
        Effect.zipRight(spaces.get(principal, spaceId)),
        Effect.zipRight(requireRole("owner", "admin")),
        Effect.as(spaceRef(principal, spaceId))
      )

    /** The job is durable already; a wake not delivered is caught by the waker's next round. */
    const wake = (space: SpaceRef) =>
      entity(spaceEntityId(space)).Wake(undefined, { discard: true }).pipe(
        Effect.catchAll((e) => Effect.logWarning("wake not delivered; the job runs at the waker's next round", e))
      )

    const jobNotFound = (jobId: string) => new NotFound({ message: `job ${jobId} not found` })

    /** An import lands only on an empty space with no other import on its way. */
    const importable = (space: SpaceRef) =>
      Effect.gen(function*() {
        const contents = yield* jobs.contents(space)
        if (contents.memories + contents.documents + contents.models > 0) {
          return yield* new Conflict({
            message: `space ${space.spaceId} is not empty (${contents.memories} memories, ${contents.documents} documents, ` +
              `${contents.models} memory models): an import restores into an empty space`
          })
        }
        if (yield* jobs.importPending(space)) {
          return yield* new Conflict({ message: `an import into space ${space.spaceId} is already queued or running` })
        }
      })

    const createExport = Effect.fn("Portability.createExport")(function*(principal: PrincipalShape, spaceId: string) {
      const space = yield* managed(principal, spaceId)
      const jobId = `job_${randomBase62(20)}`
      yield* jobs.createExport(space, jobId, new Date(yield* Clock.currentTimeMillis))
      yield* wake(space)
      return { job_id: jobId, space_id: spaceId, status: "queued" as const }
    })

    const download = Effect.fn("Portability.download")(function*(principal: PrincipalShape, spaceId: string, jobId: string) {
      const space = yield* managed(principal, spaceId)
      const job = yield* jobs.find(space, "export", jobId)
      if (Option.isNone(job)) return yield* jobNotFound(jobId)
      if (job.value.status !== "completed") {
        return yield* new Conflict({ message: `export ${jobId} is ${job.value.status}; its file can be downloaded once it is completed` })
      }
      const parts = Stream.paginateChunkEffect<number, Uint8Array, ServiceUnavailable, never>(0, (part) =>
        Effect.map(jobs.readPart(jobId, part), Option.match({
          onNone: () => [Chunk.empty<Uint8Array>(), Option.none<number>()],
          onSome: (data) => [Chunk.of(data), Option.some(part + 1)]
        })))
      return HttpServerResponse.stream(parts, {
        contentType: NDJSON,
        contentLength: job.value.progress?.bytes ?? 0,
        headers: { "content-disposition": `attachment; filename="${fileName(spaceId, jobId)}.ndjson"` }
      })
    })

    const createImport = Effect.fn("Portability.createImport")(function*(
      principal: PrincipalShape,
      spaceId: string,
      request: HttpServerRequest.HttpServerRequest
    ) {
      const space = yield* managed(principal, spaceId)
      return yield* Effect.gen(function*() {
        const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
        if (!IMPORT_TYPES.has(type)) {
          return yield* new BadRequest({ message: `send the export file as ${NDJSON}` })
        }
        const tooLarge = () => new PayloadTooLarge({ message: `the export file is larger than ${MAX_IMPORT_BYTES / MB} MB; import it with the CLI` })
        if (Number(request.headers["content-length"] ?? "0") > MAX_IMPORT_BYTES) return yield* tooLarge()
        // Admitted while credits remain; the memories are debited when the import is stored.
        yield* metering.requireCredits(principal.orgId, RATES.memory_stored)
        yield* importable(space)
        const body = request.stream.pipe(Stream.mapError(() => new BadRequest({ message: "the request body could not be read" })))
        const stored = yield* storeImport(jobs, space, body, {
          maxBytes: MAX_IMPORT_BYTES,
          tooLarge,
          empty: () => new BadRequest({ message: "the body is empty: send an export file" })
        })
        yield* Effect.annotateCurrentSpan({ job_id: stored.jobId, bytes: stored.bytes })
        yield* wake(space)
        return { job_id: stored.jobId, space_id: spaceId, status: "queued" as const }
      }).pipe(
        // A refused upload is answered at once; the rest of its body (if any is still coming) is read and dropped,
        // then the connection closed.
        Effect.tapError(() => (request.source instanceof IncomingMessage && request.source.complete ? Effect.void : lingerThenClose(request.source)))
      )
    })

    const list = <A>(kind: "export" | "import", view: (job: PortabilityJob) => A) =>
      Effect.fn(`Portability.list.${kind}`)(function*(principal: PrincipalShape, spaceId: string, page: { readonly limit: number; readonly offset: number }) {
        const space = yield* managed(principal, spaceId)
        const found = yield* jobs.list(space, kind, page)
        return { items: found.items.map(view), total: found.total, limit: page.limit, offset: page.offset }
      })

    return {
      createExport,
      listExports: list("export", exportView),
      download,
      createImport,
      listImports: list("import", importView)
    }
  })
}) {}
