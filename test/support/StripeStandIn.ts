/**
 * A local stand-in of the parts of the Stripe API billing uses, speaking its
 * wire protocol (form-encoded requests with bracketed keys, Bearer secret
 * keys, Idempotency-Key, JSON objects and Stripe's error shape), so the
 * official client runs against it unchanged. The test drives what Stripe
 * would do on its own (a customer paying, a plan changed in the portal, a
 * period renewing) and gets the callbacks Stripe would send, signed with the
 * webhook secret by the client library's own signing helper.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import Stripe from "stripe"

export const STAND_IN_SECRET_KEY = "sk_test_engram_stand_in"
export const STAND_IN_WEBHOOK_SECRET = "whsec_engram_stand_in_secret"

type Form = { [key: string]: string | Form }

/** `a[b][0][c]=v` pairs into nested objects (arrays stay objects keyed by index). */
const parseForm = (body: string): Form => {
  const root: Form = {}
  for (const pair of body.split("&")) {
    if (pair === "") continue
    const [rawKey, rawValue = ""] = pair.split("=")
    const key = decodeURIComponent(rawKey!.replace(/\+/g, " "))
    const value = decodeURIComponent(rawValue.replace(/\+/g, " "))
    const path = key.replace(/\]/g, "").split("[")
    let node = root
    for (const [i, part] of path.entries()) {
      if (i === path.length - 1) node[part] = value
      else {
        const next = node[part]
        if (typeof next === "object") node = next
        else node = node[part] = {}
      }
    }
  }
  return root
}

const text = (form: Form, ...path: Array<string>): string | undefined => {
  let node: string | Form | undefined = form
  for (const part of path) node = typeof node === "object" ? node[part] : undefined
  return typeof node === "string" ? node : undefined
}

const record = (form: Form, key: string): Record<string, string> => {
  const node = form[key]
  const out: Record<string, string> = {}
  if (typeof node === "object") for (const [k, v] of Object.entries(node)) if (typeof v === "string") out[k] = v
  return out
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)

/** The anchor's day of the month, `months` on; a short month ends on its last day (Stripe's rule). */
const monthsOn = (anchor: Date, months: number) => {
  const last = new Date(Date.UTC(anchor.getUTCFullYear(), anchor.getUTCMonth() + months + 1, 0)).getUTCDate()
  return new Date(Date.UTC(
    anchor.getUTCFullYear(),
    anchor.getUTCMonth() + months,
    Math.min(anchor.getUTCDate(), last),
    anchor.getUTCHours(),
    anchor.getUTCMinutes(),
    anchor.getUTCSeconds()
  ))
}

interface CheckoutSession {
  id: string
  object: "checkout.session"
  mode: string
  url: string | null
  status: "open" | "complete" | "expired"
  expires_at: number
  customer: string | null
  customer_email: string | null
  subscription: string | null
  client_reference_id: string | null
  metadata: Record<string, string>
  subscription_metadata: Record<string, string>
  price: string
  success_url: string
  cancel_url: string
}

interface SubscriptionState {
  id: string
  customer: string
  status: string
  price: string
  cancel_at_period_end: boolean
  billing_cycle_anchor: Date
  period: number
  metadata: Record<string, string>
}

export interface SignedEvent {
  readonly type: string
  readonly payload: string
  readonly signature: string
}

export interface StandInRequest {
  readonly method: string
  readonly path: string
  readonly form: Form
  readonly idempotencyKey: string | undefined
}

export class StripeStandIn {
  readonly requests: Array<StandInRequest> = []
  /** While set, every API call answers 500 (the processor failing). */
  failing = false
  private readonly sessions = new Map<string, CheckoutSession>()
  private readonly subscriptions = new Map<string, SubscriptionState>()
  private readonly customers = new Set<string>()
  private readonly idempotent = new Map<string, { status: number; body: unknown }>()
  private readonly signer = new Stripe(STAND_IN_SECRET_KEY)
  private next = 0

  private constructor(readonly server: Server, readonly prices: ReadonlySet<string>) {}

  static async start(prices: ReadonlyArray<string>): Promise<StripeStandIn> {
    let standIn: StripeStandIn | undefined
    const server = createServer((req, res) => void standIn!.handle(req, res))
    standIn = new StripeStandIn(server, new Set(prices))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return standIn
  }

  get url() {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  close() {
    return new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private id(prefix: string) {
    return `${prefix}_test_${Date.now().toString(36)}${(++this.next).toString(36)}`
  }

  private sessionView(session: CheckoutSession) {
    const { price: _price, subscription_metadata: _metadata, ...view } = session
    return view
  }

  private subscriptionView(sub: SubscriptionState) {
    const start = monthsOn(sub.billing_cycle_anchor, sub.period)
    const end = monthsOn(sub.billing_cycle_anchor, sub.period + 1)
    return {
      id: sub.id,
      object: "subscription",
      customer: sub.customer,
      status: sub.status,
      cancel_at_period_end: sub.cancel_at_period_end,
      billing_cycle_anchor: seconds(sub.billing_cycle_anchor),
      metadata: sub.metadata,
      items: {
        object: "list",
        data: [{
          id: `si_${sub.id}`,
          object: "subscription_item",
          price: { id: sub.price, object: "price" },
          current_period_start: seconds(start),
          current_period_end: seconds(end)
        }]
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString("utf8")
    const url = new URL(req.url ?? "/", this.url)
    const form = req.method === "GET" ? parseForm(url.search.slice(1)) : parseForm(body)
    const idempotencyKey = typeof req.headers["idempotency-key"] === "string" ? req.headers["idempotency-key"] : undefined
    this.requests.push({ method: req.method ?? "", path: url.pathname, form, idempotencyKey })
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "request-id": `req_${++this.next}` })
      res.end(JSON.stringify(payload))
    }
    const error = (status: number, message: string, type = "invalid_request_error") => send(status, { error: { type, message } })
    if (req.headers.authorization !== `Bearer ${STAND_IN_SECRET_KEY}`) return error(401, "Invalid API Key provided", "invalid_request_error")
    if (this.failing) return error(500, "the stand-in is failing on purpose", "api_error")
    const replayKey = idempotencyKey === undefined ? undefined : `${req.method} ${url.pathname} ${idempotencyKey}`
    const replay = replayKey === undefined ? undefined : this.idempotent.get(replayKey)
    if (replay !== undefined) return send(replay.status, replay.body)
    const answer = this.route(req.method ?? "GET", url.pathname, form)
    if (replayKey !== undefined && req.method === "POST") this.idempotent.set(replayKey, answer)
    send(answer.status, answer.body)
  }

  private route(method: string, path: string, form: Form): { status: number; body: unknown } {
    const notFound = (what: string) => ({ status: 404, body: { error: { type: "invalid_request_error", message: `No such ${what}` } } })
    const bad = (message: string) => ({ status: 400, body: { error: { type: "invalid_request_error", message } } })
    let match: RegExpExecArray | null
    if (method === "POST" && path === "/v1/checkout/sessions") {
      if (text(form, "mode") !== "subscription") return bad("mode must be subscription")
      const price = text(form, "line_items", "0", "price")
      if (price === undefined || !this.prices.has(price)) return bad(`No such price: '${price}'`)
      const customer = text(form, "customer") ?? null
      if (customer !== null && !this.customers.has(customer)) return notFound(`customer: '${customer}'`)
      const successUrl = text(form, "success_url")
      if (successUrl === undefined) return bad("success_url is required")
      const id = this.id("cs")
      const session: CheckoutSession = {
        id,
        object: "checkout.session",
        mode: "subscription",
        url: `https://checkout.stripe.com/c/pay/${id}`,
        status: "open",
        expires_at: seconds(new Date()) + 24 * 3600,
        customer,
        customer_email: text(form, "customer_email") ?? null,
        subscription: null,
        client_reference_id: text(form, "client_reference_id") ?? null,
        metadata: record(form, "metadata"),
        subscription_metadata: typeof form.subscription_data === "object" ? record(form.subscription_data, "metadata") : {},
        price,
        success_url: successUrl,
        cancel_url: text(form, "cancel_url") ?? ""
      }
      this.sessions.set(id, session)
      return { status: 200, body: this.sessionView(session) }
    }
    if (method === "GET" && (match = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path))) {
      const session = this.sessions.get(match[1]!)
      return session === undefined ? notFound(`checkout.session: '${match[1]}'`) : { status: 200, body: this.sessionView(session) }
    }
    if (method === "POST" && path === "/v1/billing_portal/sessions") {
      const customer = text(form, "customer")
      if (customer === undefined || !this.customers.has(customer)) return notFound(`customer: '${customer}'`)
      const id = this.id("bps")
      return {
        status: 200,
        body: { id, object: "billing_portal.session", customer, return_url: text(form, "return_url") ?? null, url: `https://billing.stripe.com/p/session/${id}` }
      }
    }
    if ((match = /^\/v1\/subscriptions\/([^/]+)$/.exec(path))) {
      const sub = this.subscriptions.get(match[1]!)
      if (sub === undefined) return notFound(`subscription: '${match[1]}'`)
      if (method === "POST") {
        const cancel = text(form, "cancel_at_period_end")
        if (cancel !== undefined) sub.cancel_at_period_end = cancel === "true"
      }
      return { status: 200, body: this.subscriptionView(sub) }
    }
    return notFound(`route: ${method} ${path}`)
  }

  /** A callback as Stripe sends it, signed with the webhook secret. */
  event(type: string, object: unknown, options: { readonly id?: string; readonly secret?: string } = {}): SignedEvent {
    const payload = JSON.stringify({
      id: options.id ?? this.id("evt"),
      object: "event",
      api_version: "2026-10-28.endive",
      created: seconds(new Date()),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object }
    })
    const signature = this.signer.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? STAND_IN_WEBHOOK_SECRET })
    return { type, payload, signature }
  }

  session(sessionId: string) {
    return this.sessions.get(sessionId)
  }

  subscription(subscriptionId: string) {
    return this.subscriptions.get(subscriptionId)
  }

  /** The customer pays: a customer and a subscription billed from `at`, and the two callbacks Stripe sends. */
  complete(sessionId: string, at: Date): { readonly subscriptionId: string; readonly events: ReadonlyArray<SignedEvent> } {
    const session = this.sessions.get(sessionId)
    if (session === undefined || session.status !== "open") throw new Error(`no open session ${sessionId}`)
    const customer = session.customer ?? this.id("cus")
    this.customers.add(customer)
    const sub: SubscriptionState = {
      id: this.id("sub"),
      customer,
      status: "active",
      price: session.price,
      cancel_at_period_end: false,
      billing_cycle_anchor: at,
      period: 0,
      metadata: session.subscription_metadata
    }
    this.subscriptions.set(sub.id, sub)
    session.status = "complete"
    session.customer = customer
    session.subscription = sub.id
    return {
      subscriptionId: sub.id,
      events: [
        this.event("customer.subscription.created", this.subscriptionView(sub)),
        this.event("checkout.session.completed", this.sessionView(session))
      ]
    }
  }

  /** The customer changes plan in the portal. */
  changePrice(subscriptionId: string, price: string): SignedEvent {
    const sub = this.subscriptions.get(subscriptionId)!
    sub.price = price
    return this.event("customer.subscription.updated", this.subscriptionView(sub))
  }

  /** The next period begins (Stripe bills again). */
  renew(subscriptionId: string): SignedEvent {
    const sub = this.subscriptions.get(subscriptionId)!
    sub.period++
    return this.event("customer.subscription.updated", this.subscriptionView(sub))
  }

  /** The subscription ends (a canceled one at its period's end, or payment failing for good). */
  end(subscriptionId: string): SignedEvent {
    const sub = this.subscriptions.get(subscriptionId)!
    sub.status = "canceled"
    return this.event("customer.subscription.deleted", this.subscriptionView(sub))
  }

  /** The checkout was abandoned. */
  expire(sessionId: string): SignedEvent {
    const session = this.sessions.get(sessionId)!
    session.status = "expired"
    return this.event("checkout.session.expired", this.sessionView(session))
  }
}
