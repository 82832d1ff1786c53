/** Raw HTTP calls, so tests see exactly what is on the wire: status, headers and JSON body. */
import { HttpClient, HttpClientRequest, HttpServer } from "@effect/platform"
import { Effect } from "effect"
import type { RouteOf, WireBody, WireMethod } from "../../src/client/Wire.ts"

/** The test node's own address, for clients that need a URL (official SDKs, fetch with FormData, raw MCP). */
export const baseUrl = Effect.map(HttpServer.HttpServer, (server) =>
  server.address._tag === "TcpAddress" ? `http://127.0.0.1:${server.address.port}` : "http://127.0.0.1")

export interface Reply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: any
  readonly text: string
}

export interface RawOptions {
  readonly json?: unknown
  readonly raw?: string
  readonly token?: string
  readonly headers?: Record<string, string>
}

export interface CallOptions<Body> extends Omit<RawOptions, "json"> {
  /** The JSON body, typed as the contract's payload for this route. */
  readonly json?: Body
  /** A JSON body outside the contract's types (hostile input, extra or missing fields), sent as is. */
  readonly offContract?: unknown
}

/**
 * A call of a route of the contract: the path must resolve to one of its
 * routes and `json` must be the payload it takes (src/client/Wire.ts), so a
 * contract change breaks the tests that use the old shape at type-check time.
 */
export const call = <M extends WireMethod, const P extends string>(
  method: M,
  path: [RouteOf<M, P>] extends [never] ? `no ${M} route of the contract matches ${P}` : P,
  options: CallOptions<WireBody<M, P>> = {}
): Effect.Effect<Reply, never, HttpClient.HttpClient> =>
  callRaw(method, path, options.offContract === undefined ? options : { ...options, json: options.offContract })

/** A call outside the contract's routes (unknown paths, wrong methods, pages, raw bodies): nothing is checked. */
export const callRaw = (method: WireMethod | "OPTIONS" | "HEAD", path: string, options: RawOptions = {}) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.headers) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.json !== undefined) request = yield* HttpClientRequest.bodyJson(request, options.json)
    if (options.raw !== undefined) {
      request = HttpClientRequest.bodyText(request, options.raw, options.headers?.["content-type"] ?? "application/json")
    }
    const response = yield* client.execute(request)
    const text = yield* response.text
    let body: any = undefined
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = text
    }
    return { status: response.status, headers: response.headers as Record<string, string>, body, text } satisfies Reply
  }).pipe(Effect.scoped, Effect.orDie)

let counter = 0
export const uniqueEmail = (label = "user") => `${label}-${Date.now()}-${process.pid}-${++counter}@example.test`

export interface Account {
  readonly token: string
  readonly orgId: string
  readonly userId: string
  readonly email: string
  readonly password: string
}

export const signup = (label = "owner") =>
  Effect.gen(function*() {
    const email = uniqueEmail(label)
    const password = "correct horse battery"
    const reply = yield* call("POST", "/auth/signup", { json: { email, password, org_name: `${label} org` } })
    if (reply.status !== 201) return yield* Effect.dieMessage(`signup failed: ${reply.status} ${reply.text}`)
    return { token: reply.body.session_token, orgId: reply.body.org_id, userId: reply.body.user_id, email, password } as Account
  })

export const createKey = (session: string, body: WireBody<"POST", "/v1/api-keys"> = { name: "test key", env: "test" }) =>
  Effect.gen(function*() {
    const reply = yield* call("POST", "/v1/api-keys", { token: session, json: body })
    if (reply.status !== 201) return yield* Effect.dieMessage(`key creation failed: ${reply.status} ${reply.text}`)
    return reply.body as { id: string; raw_key: string; key_prefix: string; expires_at: string | null }
  })

/** A second user added to `owner`'s organization with `role`, signed in there. */
export const addMember = (owner: Account, role: "owner" | "admin" | "member") =>
  Effect.gen(function*() {
    const other = yield* signup(role)
    // Adding a member invites them; they join by accepting.
    const added = yield* call("POST", "/v1/orgs/me/members", { token: owner.token, json: { email: other.email, role } })
    if (added.status !== 201) return yield* Effect.dieMessage(`add member failed: ${added.status} ${added.text}`)
    const accepted = yield* call("POST", `/v1/invitations/${added.body.id}/accept`, { token: other.token })
    if (accepted.status !== 200) return yield* Effect.dieMessage(`accepting the invitation failed: ${accepted.status} ${accepted.text}`)
    const login = yield* call("POST", "/auth/login", {
      json: { email: other.email, password: other.password, org_id: owner.orgId }
    })
    return { ...other, token: login.body.session_token as string, orgId: owner.orgId }
  })

/** Polls a space's job every 50 ms until it is no longer queued or processing (at most `attempts` polls); its body. */
export const waitForJob = (key: string, spaceId: string, jobId: string, attempts = 200) =>
  Effect.gen(function*() {
    for (let i = 0; i < attempts; i++) {
      const job = yield* call("GET", `/v1/spaces/${spaceId}/jobs/${jobId}`, { token: key })
      if (job.body.status !== "queued" && job.body.status !== "processing") return job.body
      yield* Effect.sleep("50 millis")
    }
    return yield* Effect.dieMessage("job did not finish")
  })
