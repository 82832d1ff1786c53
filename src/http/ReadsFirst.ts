/**
 * Reads before writes. Node runs each request's fiber as far as it can go as
 * soon as its bytes arrive, so a burst of writes arriving with some recalls
 * would run ahead of them, request by request. Requests that change data
 * start one per turn of the event loop, in the order they came: recalls,
 * lists and job polls that arrive with them (or meanwhile) are answered in
 * between, instead of after the whole burst. A read is marked in progress
 * (ReadPriority), so the heavy steps of writes on this node wait for it.
 */
import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Context, Deferred, Effect, Layer, Queue } from "effect"
import { ReadPriority } from "../../services/EventLoop.ts"

/** Requests that read, though sent as POST: recall in its two shapes. */
const READ_POSTS = new Set(["/v1/retrieve", "/v1/search"])

const isRead = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "GET" || request.method === "HEAD" || (request.method === "POST" && READ_POSTS.has(request.url.split("?")[0] ?? ""))

/** One turn of Node's event loop: what arrived meanwhile (a recall's bytes) is read before this resumes. */
const nextTurn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** The node's queue of writes waiting to start: one starts per turn of the event loop, in the order they came. */
export class WriteTurns extends Context.Tag("engram/http/WriteTurns")<WriteTurns, {
  /** Waits for this write's turn: after the writes that came before it, each a turn of the event loop apart. */
  readonly turn: Effect.Effect<void>
}>() {
  static readonly layer = Layer.scoped(
    WriteTurns,
    Effect.gen(function*() {
      const waiting = yield* Queue.unbounded<Deferred.Deferred<void>>()
      // Lets the oldest waiting write start, then gives the event loop a turn before the next. Nothing in it can fail.
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.flatMap(Queue.take(waiting), (next) => Deferred.succeed(next, undefined)), nextTurn)))
      return {
        turn: Effect.flatMap(Deferred.make<void>(), (mine) => Effect.zipRight(Queue.offer(waiting, mine), Deferred.await(mine)))
      }
    })
  )
}

export const readsFirst = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | ReadPriority | WriteTurns> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!isRead(request)) return yield* Effect.zipRight((yield* WriteTurns).turn, app)
    return yield* (yield* ReadPriority).read(app)
  })
