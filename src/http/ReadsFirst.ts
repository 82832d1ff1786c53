/**
 * Reads before writes. Node runs each request's fiber as far as it can go as
 * soon as its bytes arrive, so a burst of writes arriving with some recalls
 * would run ahead of them, request by request. A request that changes data
 * first gives the event loop one turn, so requests that only read and arrived
 * with it (recall, lists, jobs) are answered first; the write then proceeds.
 */
import { type HttpApp, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { yieldToIo } from "../../services/EventLoop.ts"

/** Requests that read, though sent as POST: recall in its two shapes. */
const READ_POSTS = new Set(["/v1/retrieve", "/v1/search"])

const isRead = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "GET" || request.method === "HEAD" || (request.method === "POST" && READ_POSTS.has(request.url.split("?")[0] ?? ""))

export const readsFirst = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => (isRead(request) ? app : Effect.zipRight(yieldToIo, app)))
