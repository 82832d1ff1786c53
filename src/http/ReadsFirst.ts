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
import { Effect } from "effect"
import { ReadPriority } from "../../services/EventLoop.ts"

/** Requests that read, though sent as POST: recall in its two shapes. */
const READ_POSTS = new Set(["/v1/retrieve", "/v1/search"])

const isRead = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "GET" || request.method === "HEAD" || (request.method === "POST" && READ_POSTS.has(request.url.split("?")[0] ?? ""))

const waiting: Array<() => void> = []
let pumping = false

/** Lets the oldest waiting write start, then gives the event loop a turn before the next. */
const pump = () => {
  waiting.shift()?.()
  if (waiting.length > 0) setImmediate(pump)
  else pumping = false
}

/** Waits for this write's turn: after the writes that came before it, each a turn of the event loop apart. */
const turn = Effect.async<void>((resume) => {
  const start = () => resume(Effect.void)
  waiting.push(start)
  if (!pumping) {
    pumping = true
    setImmediate(pump)
  }
  return Effect.sync(() => {
    const at = waiting.indexOf(start)
    if (at >= 0) waiting.splice(at, 1)
  })
})

export const readsFirst = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | ReadPriority> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!isRead(request)) return yield* Effect.zipRight(turn, app)
    return yield* (yield* ReadPriority).read(app)
  })
