/**
 * What happened in a space, for its loops: the writer, the load and the Wake
 * call publish; each loop subscribes to what it acts on. The parts of the
 * entity talk through this hub rather than through callbacks set after the
 * fact, so each is made with what exists already and none needs another to
 * be made first.
 */
import { Cause, Data, Effect, PubSub, Queue, type Scope } from "effect"
import type { SpaceRef } from "../domain/Ids.ts"

export type SpaceEvent = Data.TaggedEnum<{
  /** Active facts were stored, changed or left a note: consolidation has work. */
  FactsChanged: {}
  /** Memories were recorded (or a consolidation applied): models refresh after their debounce. */
  Recorded: {}
  /** Webhook deliveries were queued in the store. */
  DeliveriesQueued: {}
  /** The space's index was loaded (the space woke): work left due by a restart resumes. */
  Loaded: {}
  /** A job of writes was queued by the Enqueue call: the drain has work. */
  Queued: {}
  /** The Wake call: the waker found work due in the store (queued items, pending facts, due models or deliveries). */
  Woken: {}
}>

export const SpaceEvent = Data.taggedEnum<SpaceEvent>()

export interface SpaceEventsShape {
  readonly publish: (event: SpaceEvent) => Effect.Effect<void>
  /**
   * From now on, runs `handle` for each event of `tags`, one at a time, in a
   * fiber of the caller's scope (the entity's). A failure of `handle` is
   * logged with the event and the space; the next event is handled as usual.
   */
  readonly on: <E>(
    tags: ReadonlyArray<SpaceEvent["_tag"]>,
    handle: (event: SpaceEvent) => Effect.Effect<void, E>
  ) => Effect.Effect<void, never, Scope.Scope>
}

export const makeSpaceEvents = (space: SpaceRef): Effect.Effect<SpaceEventsShape, never, Scope.Scope> =>
  Effect.gen(function*() {
    const hub = yield* PubSub.unbounded<SpaceEvent>()
    yield* Effect.addFinalizer(() => PubSub.shutdown(hub))
    return {
      publish: (event) => Effect.asVoid(PubSub.publish(hub, event)),
      on: (tags, handle) =>
        Effect.gen(function*() {
          const inbox = yield* PubSub.subscribe(hub)
          const one = (event: SpaceEvent) =>
            tags.includes(event._tag)
              ? handle(event).pipe(
                Effect.catchAllCause((cause) =>
                  Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logWarning(`handling ${event._tag} failed`, cause).pipe(
                    Effect.annotateLogs({ org_id: space.orgId, space_id: space.spaceId, event: event._tag })
                  )
                )
              )
              : Effect.void
          yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(inbox), one)))
        })
    }
  })
