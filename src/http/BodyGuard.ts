/**
 * Every request body is read here, once, before any route sees it: JSON only
 * (plus the labels `curl -d` and some clients send), at most
 * `JSON_BODY_LIMIT` bytes (413 as soon as the limit is crossed, not after the
 * rest has arrived), valid UTF-8, nested at most `JSON_BODY_MAX_DEPTH` levels
 * (a scan of the raw text, before anything parses it). A route that reads
 * its own body (a multipart upload, with limits of its own) opts out by
 * declaring it (`RawRoutes.ownBodies`, read from the `RouteTable`). The
 * URL's percent-encoding must be UTF-8 too.
 */
import { HttpServerError, HttpServerRequest, UrlParams } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import { IncomingMessage, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { Readable } from "node:stream"
import { BadRequest, PayloadTooLarge, ValidationError } from "../domain/Errors.ts"
import { RouteTable } from "./Routes.ts"

/** 32 MiB: a full batch (100 items of 100,000 characters of any script, at most 3 UTF-8 bytes each) or a long proxied conversation. */
export const JSON_BODY_LIMIT = 32 * 1024 * 1024

/** Nesting of a whole body; metadata inside it is held to its own, lower limit (`METADATA_MAX_DEPTH`). */
export const JSON_BODY_MAX_DEPTH = 64

export type Refusal = BadRequest | PayloadTooLarge | ValidationError


/** Read as JSON: no type, JSON itself, and the labels of `curl -d` (form-urlencoded) and of text/plain clients. */
const JSON_LIKE = /^(|application\/json|application\/[a-z0-9.+-]+\+json|text\/plain|application\/x-www-form-urlencoded)$/

const mediaType = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()

/** A media type is named in a message only when it looks like one. */
const nameOf = (type: string) => (/^[a-z0-9.+-]{1,60}\/[a-z0-9.+-]{1,60}$/.test(type) ? type : "this content type")

/** Whether the headers announce a body: chunked, or a length other than zero. */
const bodyAnnounced = (headers: { readonly [name: string]: string | ReadonlyArray<string> | undefined }) => {
  const length = headers["content-length"]
  return headers["transfer-encoding"] !== undefined || (typeof length === "string" && length.trim() !== "0")
}

const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.method !== "GET" && request.method !== "HEAD" && request.method !== "OPTIONS" && bodyAnnounced(request.headers)

const tooLarge = () => new PayloadTooLarge({ message: `the request body is larger than ${JSON_BODY_LIMIT} bytes` })

/**
 * How long a refused request's connection is kept while nothing more arrives.
 * The rest of a refused body is read and thrown away (nothing of it kept) so
 * that a client still sending it is not reset before it reads the refusal;
 * the refusal says `Connection: close`, so a client that stopped sending
 * never reuses the connection, and once the client has closed its side (or
 * sent nothing for this long) the connection is closed: cleanly, never under
 * a request that came after.
 */
const LINGER_MS = 5_000

/** A refused request's drain is never longer than this, however fast its client sends. */
const LINGER_MAX_BYTES = 256 * 1024 * 1024

/**
 * A body slower than this is cut off with 408 `request_timeout`: fewer than
 * SLOW_BODY_MIN_BYTES in SLOW_BODY_WINDOW_MS (about 100 bytes a second),
 * checked every second while the body is incomplete.
 */
export const SLOW_BODY_WINDOW_MS = 10_000
export const SLOW_BODY_MIN_BYTES = 1024

/** Each request's response, for the refusal that must say `Connection: close` (set by `guardConnection`). */
const responses = new WeakMap<IncomingMessage, ServerResponse>()

/**
 * Ends the socket's side of the connection (after the response) and lets
 * the HTTP parser go on reading what the client still sends into the
 * request (flowing, kept nowhere), until the body or the client's side ends,
 * LINGER_MS pass without a byte, or LINGER_MAX_BYTES arrived: then the
 * socket goes.
 *
 * No `data` listener goes on the socket itself: that takes the socket away
 * from Node's parser, and a socket the parser had paused (a body that came
 * in with the headers fills the request's buffer) would then never read
 * again. Progress is `bytesRead`, checked once a second; quiet means
 * LINGER_MS consecutive checks saw nothing, so a busy event loop is not
 * mistaken for a quiet client.
 */
const closeGently = (socket: Socket, request: IncomingMessage) => {
  // Once the refusal is flushed: destroying before would cut it short.
  const done = () => (socket.writableFinished ? socket.destroy() : socket.once("finish", () => socket.destroy()))
  const start = socket.bytesRead
  let mark = start
  let quietChecks = 0
  const timer = setInterval(() => {
    const read = socket.bytesRead
    if (read - start > LINGER_MAX_BYTES) return socket.destroy()
    if (read !== mark) {
      mark = read
      quietChecks = 0
      return
    }
    quietChecks += 1
    if (quietChecks * 1_000 >= LINGER_MS) done()
  }, 1_000)
  timer.unref()
  socket.once("close", () => clearInterval(timer))
  socket.once("end", done)
  if (request.readableEnded) done()
  else request.once("end", done)
  // The request flows already (lingerThenClose); the socket may be paused by the parser.
  socket.end()
  socket.resume()
}

/**
 * After a refusal made before the whole body was read: the response says
 * `Connection: close`, the rest of the body is read and thrown away, and
 * the connection closes cleanly once the client is done (see LINGER_MS).
 */
export const lingerThenClose = (source: unknown) =>
  Effect.sync(() => {
    if (!(source instanceof IncomingMessage) || source.complete) return
    const response = responses.get(source)
    if (response !== undefined && !response.headersSent) response.setHeader("connection", "close")
    source.resume()
    // Node ends a `Connection: close` response's socket with destroySoon: closed gently instead.
    const socket = source.socket
    socket.destroySoon = () => closeGently(socket, source)
  })

const TIMEOUT_BODY = JSON.stringify({
  error: { code: "request_timeout", message: `the request body arrived too slowly (under ${SLOW_BODY_MIN_BYTES} bytes in ${SLOW_BODY_WINDOW_MS / 1000} s); send it again faster` }
})

/**
 * Installed on the node's HTTP server for every request, beside the API: it
 * knows each request's response (for `lingerThenClose`), and cuts off a body
 * that arrives slower than the minimum rate with 408 `request_timeout`
 * (`Connection: close`), however the route reads it, so a trickling client
 * holds a connection for seconds, not minutes.
 */
export const guardConnection = (request: IncomingMessage, response: ServerResponse) => {
  responses.set(request, response)
  if (!bodyAnnounced(request.headers) || request.method === "GET" || request.method === "HEAD") return
  const socket = request.socket
  let mark = socket.bytesRead
  // Node's own request handler, outside any fiber: elapsed time on the monotonic clock.
  let since = performance.now()
  const timer = setInterval(() => {
    if (request.complete || response.writableEnded || request.destroyed) return clearInterval(timer)
    const read = socket.bytesRead
    if (read - mark >= SLOW_BODY_MIN_BYTES) {
      mark = read
      since = performance.now()
      return
    }
    if (performance.now() - since < SLOW_BODY_WINDOW_MS) return
    clearInterval(timer)
    if (!response.headersSent) {
      response.writeHead(408, { "content-type": "application/json", connection: "close" })
      response.end(TIMEOUT_BODY)
    }
    // A client this slow is not drained: the socket ends after the 408 and goes a second later.
    socket.destroySoon = () => {
      socket.end()
      setTimeout(() => socket.destroy(), 1_000).unref()
    }
  }, 1_000)
  timer.unref()
  request.once("end", () => clearInterval(timer))
  response.once("close", () => clearInterval(timer))
}

/**
 * Node's request stream, read until the limit: on crossing it, nothing more
 * is kept (see lingerThenClose for the rest of it).
 */
const readNode = (source: Readable) =>
  Effect.async<Uint8Array, Refusal>((resume) => {
    if (source.readableEnded) return resume(Effect.succeed(new Uint8Array(0)))
    const chunks: Array<Buffer> = []
    let bytes = 0
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: unknown) => {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
      bytes += buffer.length
      if (bytes > JSON_BODY_LIMIT) {
        stop()
        resume(Effect.fail(tooLarge()))
        return
      }
      chunks.push(buffer)
    }
    const onEnd = () => {
      stop()
      resume(Effect.succeed(Buffer.concat(chunks, bytes)))
    }
    const onError = () => {
      stop()
      resume(Effect.fail(new BadRequest({ message: "the request body could not be read" })))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(stop)
  })

/** Any other server: its body stream, counted the same way. */
const readStream = (request: HttpServerRequest.HttpServerRequest) =>
  request.stream.pipe(
    Stream.mapError(() => new BadRequest({ message: "the request body could not be read" })),
    Stream.runFoldEffect({ chunks: new Array<Uint8Array>(), bytes: 0 }, (read, chunk) =>
      read.bytes + chunk.length > JSON_BODY_LIMIT
        ? Effect.fail(tooLarge())
        : Effect.succeed({ chunks: [...read.chunks, chunk], bytes: read.bytes + chunk.length })),
    Effect.map((read) => Buffer.concat(read.chunks, read.bytes))
  )

const readBody = (request: HttpServerRequest.HttpServerRequest) => {
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > JSON_BODY_LIMIT) return Effect.zipRight(lingerThenClose(request.source), Effect.fail(tooLarge()))
  const read: Effect.Effect<Uint8Array, Refusal> = request.source instanceof Readable ? readNode(request.source) : readStream(request)
  return read.pipe(Effect.tapErrorTag("PayloadTooLarge", () => lingerThenClose(request.source)))
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

/** Whether JSON text nests deeper than `limit`; string contents (which may hold brackets) are skipped. */
export const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // Jump to the closing quote: one not preceded by an odd run of backslashes.
      let end = text.indexOf("\"", i + 1)
      while (end !== -1) {
        let slashes = 0
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++
        if (slashes % 2 === 0) break
        end = text.indexOf("\"", end + 1)
      }
      if (end === -1) return false
      i = end
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return false
}

/** Percent-encoded runs of the URL must decode as UTF-8 (a lone `%` is left to the route). */
const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g
const urlIsUtf8 = (url: string) => {
  for (const run of url.match(PERCENT_RUN) ?? []) {
    try {
      decodeURIComponent(run)
    } catch {
      return false
    }
  }
  return true
}

/**
 * The request as the routes see it: its checked body answers `text`, `json`
 * and the rest. Derived from the server's own request object (not wrapped),
 * because the server reads that object's internals to send the response.
 */
const withBody = (request: HttpServerRequest.HttpServerRequest, bytes: Uint8Array, text: string): HttpServerRequest.HttpServerRequest => {
  let parsed: Either.Either<unknown, unknown> | undefined
  const decodeError = (cause: unknown) => new HttpServerError.RequestError({ request: checked, reason: "Decode", cause })
  const checked: HttpServerRequest.HttpServerRequest = Object.create(request, {
    text: { value: Effect.succeed(text) },
    json: {
      value: Effect.suspend(() => {
        parsed ??= Either.try(() => (text === "" ? null : JSON.parse(text)))
        return Either.isRight(parsed) ? Effect.succeed(parsed.right) : Effect.fail(decodeError(parsed.left))
      })
    },
    urlParamsBody: {
      value: Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: decodeError })
    },
    arrayBuffer: { value: Effect.sync(() => new Uint8Array(bytes).buffer) },
    stream: { value: Stream.succeed(bytes) },
    modify: {
      value: (options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) => withBody(request.modify(options), bytes, text)
    }
  })
  return checked
}

/** JSON bodies are read as JSON whatever lenient label they came with. */
const asJson = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["content-type"] === "application/json"
    ? request
    : request.modify({ headers: { ...request.headers, "content-type": "application/json" } })

/** The request with its body read and checked, or the documented refusal. */
export const guardRequest = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    if (!urlIsUtf8(request.url)) {
      return yield* new BadRequest({ message: "the URL's percent-encoding is not valid UTF-8" })
    }
    if ((yield* RouteTable).readsOwnBody(request.method, request.url.split("?")[0] ?? "/")) return request
    const type = mediaType(request)
    if (!hasBody(request)) {
      const bodiless = request.method === "GET" || request.method === "HEAD" || !JSON_LIKE.test(type)
      return bodiless ? request : asJson(request)
    }
    if (!JSON_LIKE.test(type)) {
      return yield* new BadRequest({ message: `the request body must be JSON (application/json), not ${nameOf(type)}` })
    }
    const bytes = yield* readBody(request)
    const text = yield* Effect.try({
      try: () => strictUtf8.decode(bytes),
      catch: () => new BadRequest({ message: "the request body is not valid UTF-8" })
    })
    if (nestsDeeperThan(text, JSON_BODY_MAX_DEPTH)) {
      return yield* new ValidationError({ message: `the request body nests deeper than ${JSON_BODY_MAX_DEPTH} levels` })
    }
    return withBody(asJson(request), bytes, text)
  })
