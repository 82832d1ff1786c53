/**
 * How a delivery leaves the building: one HTTPS POST, to the address that
 * was checked. The name is resolved at delivery time, every address it
 * resolves to must be allowed (Addresses.ts), and the connection goes to the
 * checked address itself (a rebinding name gets no second lookup); the TLS
 * certificate is still verified against the name. No redirect is followed;
 * the whole exchange is cut at 10 s.
 */
import { Context, Data, Duration, Effect, Layer } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import { Agent, request } from "node:https"
import type { LookupFunction } from "node:net"
import { isIP } from "node:net"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { bareHost, isLocalName, refusedAddress } from "./Addresses.ts"

/** The spec's delivery timeout. */
export const DELIVERY_TIMEOUT = Duration.seconds(10)

/** A URL a webhook may not use, or a name that resolves where it may not go. */
export class RefusedUrl extends Data.TaggedError("RefusedUrl")<{ readonly message: string }> {}

/** The attempt got no HTTP answer: refused address, DNS, TLS, connection, timeout. */
export class NoAnswer extends Data.TaggedError("NoAnswer")<{ readonly message: string }> {}

export interface Resolved {
  readonly address: string
  readonly family: 4 | 6
}

/** Every address a name resolves to (empty when it does not resolve). */
export type Resolve = (host: string) => Promise<ReadonlyArray<Resolved>>

const systemResolve: Resolve = async (host) => {
  try {
    const found = await dnsLookup(host, { all: true, verbatim: true })
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 as const : 4 as const }))
  } catch {
    return []
  }
}

export interface TransportOptions {
  /** WEBHOOK_ALLOW_PRIVATE: loopback and private receivers allowed (development, tests). */
  readonly allowPrivate: boolean
  /** Extra trusted certificates (PEM) beside Node's own store (which NODE_EXTRA_CA_CERTS extends). */
  readonly ca?: string | undefined
  readonly resolve?: Resolve
  readonly timeout?: Duration.Duration
}

export interface WebhookTransportShape {
  /**
   * Checks a URL for a webhook (creation, edit): HTTPS, no credentials, a
   * host that resolves, only to allowed addresses. Answers the addresses.
   */
  readonly check: (url: string) => Effect.Effect<ReadonlyArray<Resolved>, RefusedUrl>
  /** One attempt: the receiver's status, or why there was none. */
  readonly post: (
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string
  ) => Effect.Effect<{ readonly status: number }, RefusedUrl | NoAnswer>
}

export const makeTransport = (options: TransportOptions): WebhookTransportShape => {
  const resolve = options.resolve ?? systemResolve
  // Connections are kept alive and reused per receiver: a TLS handshake per delivery would cost more than the
  // delivery. A reused connection was made to an address checked then; every attempt still checks the name anew.
  const agent = new Agent({ keepAlive: true, maxSockets: 8, ...(options.ca === undefined ? {} : { ca: options.ca }) })
  const timeoutMs = Duration.toMillis(options.timeout ?? DELIVERY_TIMEOUT)
  const refuse = (message: string) => Effect.fail(new RefusedUrl({ message }))

  const check = (raw: string) =>
    Effect.gen(function*() {
      let url: URL
      try {
        url = new URL(raw)
      } catch {
        return yield* refuse("url: not a valid URL")
      }
      if (url.protocol !== "https:") return yield* refuse("url: must use https")
      if (url.username !== "" || url.password !== "") return yield* refuse("url: must not carry credentials")
      const host = bareHost(url.hostname)
      if (host === "") return yield* refuse("url: has no host")
      if (isIP(host) !== 0) {
        const why = refusedAddress(host, options.allowPrivate)
        return why === undefined ? [{ address: host, family: isIP(host) === 6 ? 6 as const : 4 as const }] : yield* refuse(`url: ${why}`)
      }
      if (isLocalName(host) && !options.allowPrivate) return yield* refuse(`url: ${host} is this machine`)
      const addresses = yield* Effect.promise(() => resolve(host))
      if (addresses.length === 0) return yield* refuse(`url: ${host} does not resolve`)
      for (const { address } of addresses) {
        const why = refusedAddress(address, options.allowPrivate)
        if (why !== undefined) return yield* refuse(`url: ${host} resolves to ${address}; ${why}`)
      }
      return addresses
    })

  const send = (url: URL, to: Resolved, headers: Readonly<Record<string, string>>, body: string) =>
    Effect.async<{ readonly status: number }, NoAnswer>((resume, signal) => {
      const host = bareHost(url.hostname)
      // The connection goes to the checked address, whatever a resolver would answer now.
      const pinned: LookupFunction = (_name, lookupOptions, callback) => {
        if (lookupOptions.all) callback(null, [{ address: to.address, family: to.family }])
        else callback(null, to.address, to.family)
      }
      let settled = false
      const finish = (result: { readonly status: number } | NoAnswer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resume(result instanceof NoAnswer ? Effect.fail(result) : Effect.succeed(result))
      }
      const req = request({
        host,
        port: url.port === "" ? 443 : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        lookup: pinned,
        ...(isIP(host) === 0 ? { servername: host } : {}),
        agent,
        signal
      }, (res) => {
        // The answer's body is not needed; read it away so the socket closes cleanly.
        res.on("data", () => {})
        res.on("end", () => finish({ status: res.statusCode ?? 0 }))
        res.on("error", () => finish({ status: res.statusCode ?? 0 }))
      })
      const timer = setTimeout(() => {
        finish(new NoAnswer({ message: `no answer within ${timeoutMs / 1000} s` }))
        req.destroy()
      }, timeoutMs)
      req.on("error", (error) => finish(new NoAnswer({ message: describe(error) })))
      req.end(body)
      return Effect.sync(() => {
        clearTimeout(timer)
        req.destroy()
      })
    })

  const post = (raw: string, headers: Readonly<Record<string, string>>, body: string) =>
    Effect.gen(function*() {
      const addresses = yield* check(raw)
      return yield* send(new URL(raw), addresses[0]!, headers, body)
    })

  return { check, post }
}

const describe = (error: Error & { readonly code?: string }) => {
  const code = error.code === undefined ? "" : `${error.code}: `
  return `${code}${error.message}`.slice(0, 500)
}

export class WebhookTransport extends Context.Tag("engram/webhooks/WebhookTransport")<WebhookTransport, WebhookTransportShape>() {
  /** The system's resolver and trust store (NODE_EXTRA_CA_CERTS extends it); WEBHOOK_ALLOW_PRIVATE from the config. */
  static readonly live = Layer.effect(
    WebhookTransport,
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (config.webhookAllowPrivate) {
        yield* Effect.logWarning("WEBHOOK_ALLOW_PRIVATE is set: webhooks may reach loopback and private addresses (development and tests only)")
      }
      return makeTransport({ allowPrivate: config.webhookAllowPrivate })
    })
  )
  static readonly make = (options: TransportOptions) => Layer.succeed(WebhookTransport, makeTransport(options))
}
