/**
 * An export file becomes an import job: its bytes go to a temporary file as
 * they arrive (counted against a limit, refused the moment it is crossed),
 * then into the store in parts together with the job, in one transaction.
 * Nothing is stored for a body that was refused or cut off. The HTTP route
 * and the CLI both come this way.
 */
import { Clock, Effect, Stream } from "effect"
import { mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import type { SpaceRef } from "../domain/Ids.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { FILE_PART_BYTES, type PortabilityRepo } from "../../services/store/PortabilityRepo.ts"

export const storeImport = <E, E2, E3>(
  jobs: PortabilityRepo,
  space: SpaceRef,
  body: Stream.Stream<Uint8Array, E>,
  refusals: { readonly maxBytes: number; readonly tooLarge: () => E2; readonly empty: () => E3 }
): Effect.Effect<{ readonly jobId: string; readonly bytes: number }, E | E2 | E3 | ServiceUnavailable> =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "engram-import-"))),
    (dir) =>
      Effect.gen(function*() {
        const path = join(dir, "upload.ndjson")
        const handle = yield* Effect.promise(() => open(path, "w"))
        let size = 0
        yield* Stream.runForEach(body, (chunk) =>
          Effect.suspend(() => {
            size += chunk.length
            if (size > refusals.maxBytes) return Effect.fail(refusals.tooLarge())
            return Effect.promise(() => handle.write(chunk))
          })).pipe(Effect.ensuring(Effect.promise(() => handle.close())))
        if (size === 0) return yield* Effect.fail(refusals.empty())

        const jobId = `job_${randomBase62(20)}`
        const now = new Date(yield* Clock.currentTimeMillis)
        const file = yield* Effect.promise(() => open(path, "r"))
        yield* jobs.transaction(Effect.gen(function*() {
          yield* jobs.createImport(space, jobId, size, now)
          for (let part = 0, offset = 0; offset < size; part++) {
            const buffer = Buffer.alloc(Math.min(FILE_PART_BYTES, size - offset))
            yield* Effect.promise(() => file.read(buffer, 0, buffer.length, offset))
            yield* jobs.putPart(jobId, part, buffer)
            offset += buffer.length
          }
        })).pipe(Effect.ensuring(Effect.promise(() => file.close())))
        return { jobId, bytes: size }
      }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )
