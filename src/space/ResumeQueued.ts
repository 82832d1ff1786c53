/** At start-up, wakes the entity of every space that still has queued writes, so a restart resumes them. */
import { Effect, Layer } from "effect"
import { SpaceEntity, spaceEntityId } from "../domain/SpaceProtocol.ts"
import { JobRepo } from "../../services/store/JobRepo.ts"

export const ResumeQueued = Layer.effectDiscard(
  Effect.gen(function*() {
    const jobs = yield* JobRepo
    const entity = yield* SpaceEntity.client
    const pending = yield* jobs.spacesWithQueued
    yield* Effect.forEach(pending, (space) =>
      entity(spaceEntityId(space.org_id, space.space_id)).Drain().pipe(
        Effect.catchAll((error) => Effect.logWarning("could not resume queued writes", error))
      ), { discard: true, concurrency: 4 })
    if (pending.length > 0) yield* Effect.logInfo(`resumed queued writes in ${pending.length} space(s)`)
  }).pipe(Effect.withSpan("ResumeQueued"), Effect.orDie)
)
