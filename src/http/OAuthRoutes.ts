/**
 * The MCP authorization server's routes (docs/oauth.md): discovery documents,
 * registration, the authorize pages, token and revocation. Their refusals
 * are the RFCs' own (`{error, error_description}`, or an HTML page), not the
 * envelope; the browser session is a cookie holding an Accounts session token.
 * All but the pages answer any origin (CORS).
 */
import { randomBytes } from "node:crypto"
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Layer, Option, Schema } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import {
  AUTHORIZATION_PARAMS,
  AuthorizationRequest,
  OAuthError,
  oauthError,
  RevocationRequest,
  SCOPE_WRITE,
  TokenRequest
} from "../domain/OAuth.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { Accounts } from "../identity/Accounts.ts"
import { Authenticator } from "../identity/Authenticator.ts"
import { csrfMatches, csrfToken, OAuthAuthorization, secretMatches, type ValidRequest } from "../oauth/OAuthAuthorization.ts"
import {
  AUTHORIZATION_SERVER_PATH,
  authorizationServerMetadata,
  baseUrl,
  PROTECTED_RESOURCE_PATH,
  protectedResourceMetadata,
  resourceOf
} from "../oauth/OAuthMetadata.ts"
import { consentPage, errorPage, signInPage } from "../oauth/OAuthPages.ts"
import { OAuthRegistration } from "../oauth/OAuthRegistration.ts"
import { OAuthTokens } from "../oauth/OAuthTokens.ts"
import { Spaces } from "../spaces/Spaces.ts"
import { CORS, CROSS_ORIGIN, preflight } from "./OAuthCors.ts"
import { renderFailures } from "./RawRoutes.ts"
import type { RawRoutes } from "./Routes.ts"

const COOKIE = "engram_oauth_session"
/** The sign-in form's secret, double-submitted: in this cookie and in the form. */
const LOGIN_COOKIE = "engram_oauth_login"
const LOGIN_SECRET = /^[A-Za-z0-9_-]{32}$/

/** A form or JSON body's fields (repeated form fields keep every value). */
const readFields = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.mapError(request.text, () => oauthError("invalid_request", "the request body could not be read"))
  if (text.trimStart().startsWith("{")) {
    const parsed = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: () => oauthError("invalid_request", "the request body is not valid JSON")
    })
    const object = yield* Schema.decodeUnknown(Schema.Record({ key: Schema.String, value: Schema.Unknown }))(parsed).pipe(
      Effect.mapError(() => oauthError("invalid_request", "the request body must be a JSON object"))
    )
    const params = new URLSearchParams()
    for (const [name, value] of Object.entries(object)) {
      if (typeof value === "string") params.append(name, value)
      else if (Array.isArray(value)) for (const item of value) if (typeof item === "string") params.append(name, item)
    }
    return params
  }
  return new URLSearchParams(text)
})

const single = (params: URLSearchParams) => Object.fromEntries([...new Set(params.keys())].map((name) => [name, params.get(name) ?? ""]))

const queryOf = (request: HttpServerRequest.HttpServerRequest) => new URLSearchParams(request.url.split("?")[1] ?? "")

const noStore = { "cache-control": "no-store", pragma: "no-cache" }

const oauthJson = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status, headers: noStore })

/** RFC 6749 §5.2 (and 7591 §3.2.2): the error code and a description; other failures stay the envelope. */
const renderOAuth = <R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
  renderFailures(handler.pipe(
    Effect.catchIf((e): e is OAuthError => e instanceof OAuthError, (e) =>
      Effect.succeed(oauthJson({ error: e.error, error_description: e.description }, e.status)))
  ))

const found = (location: string, status = 302) => HttpServerResponse.empty({ status, headers: { location, ...noStore } })

const base = Effect.gen(function*() {
  return baseUrl(yield* AppConfig, yield* HttpServerRequest.HttpServerRequest)
})

/** The signed-in browser's session (a cookie holding a session token), if any and still valid. */
const browserSession = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const token = request.cookies[COOKIE]
  if (token === undefined || token === "") return Option.none<{ principal: PrincipalShape; token: string }>()
  const principal = yield* (yield* Authenticator).authenticate({ authorization: `Bearer ${token}`, orgId: undefined }).pipe(
    Effect.map(Option.some),
    Effect.catchTags({ Unauthorized: () => Effect.succeedNone, InvalidApiKey: () => Effect.succeedNone, KeyExpired: () => Effect.succeedNone })
  )
  return Option.filter(principal, (p) => p.credential._tag === "Session").pipe(Option.map((p) => ({ principal: p, token })))
})

/** The authorization request's own parameters, to carry through the forms. */
const carried = (params: URLSearchParams) =>
  AUTHORIZATION_PARAMS.flatMap((name) => {
    const value = params.get(name)
    return value === null ? [] : [[name, value] as const]
  })

/** The sign-in page with the browser's sign-in secret: the one its cookie holds, or a new one set now. */
const signInForm = (params: URLSearchParams, clientName: string, error?: string, status?: number) =>
  Effect.gen(function*() {
    const held = (yield* HttpServerRequest.HttpServerRequest).cookies[LOGIN_COOKIE]
    const secret = held !== undefined && LOGIN_SECRET.test(held) ? held : randomBytes(24).toString("base64url")
    const secure = (yield* base).startsWith("https:")
    return yield* signInPage(carried(params), clientName, secret, error, status).pipe(
      HttpServerResponse.setCookie(LOGIN_COOKIE, secret, { httpOnly: true, sameSite: "lax", secure, path: "/oauth" }),
      Effect.orDie
    )
  })

/** The request checked; a refusal is already the response (a page, or the redirect back with `error=`). */
const checkRequest = (params: URLSearchParams) =>
  Effect.gen(function*() {
    const request = yield* Schema.decodeUnknown(AuthorizationRequest)(single(params)).pipe(Effect.orDie)
    return yield* (yield* OAuthAuthorization).validate(request, resourceOf(yield* base)).pipe(
      Effect.map(Either.right<ValidRequest>),
      Effect.catchTags({
        Shown: (refusal) => Effect.succeed(Either.left(errorPage(refusal.message))),
        Returned: (refusal) => Effect.succeed(Either.left(found(refusal.location)))
      })
    )
  })

type BrowserSession = { readonly principal: PrincipalShape; readonly token: string }

/**
 * The session's user in the organization the page chose (`org_id`), with
 * their role there; the session's own organization when none is named. None
 * when they are not a member of the one named: the form is never trusted.
 */
const chosenOrganization = (params: URLSearchParams, session: BrowserSession) =>
  Effect.gen(function*() {
    const orgId = params.get("org_id")
    if (orgId === null || orgId === "" || orgId === session.principal.orgId) return Option.some(session.principal)
    return yield* (yield* Accounts).actingIn(session.principal, orgId).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotFound", () => Effect.succeedNone)
    )
  })

const notAMember = () => errorPage("You are not a member of that organization; start the connection again.", 403)

/** The consent page for `principal`'s organization (its spaces), with a chooser of the user's other organizations. */
const consent = (params: URLSearchParams, valid: ValidRequest, session: BrowserSession, principal: PrincipalShape, error?: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const organization = yield* accounts.organization(principal)
    const organizations = yield* accounts.organizations(principal)
    const spaces = yield* (yield* Spaces).list(principal, { limit: 500, offset: 0 })
    return consentPage({
      params: carried(params),
      clientName: valid.clientName,
      orgId: principal.orgId,
      organization: organization.name,
      organizations: organizations.map((org) => ({ id: org.org_id, name: org.name, role: org.role })),
      email: organization.email,
      writeRequested: valid.scope.includes(SCOPE_WRITE),
      spaces: spaces.items.map((space) => ({ id: space.space_id, name: space.name })),
      csrf: csrfToken(session.token),
      error
    })
  })

const authorizeGet = Effect.gen(function*() {
  const params = queryOf(yield* HttpServerRequest.HttpServerRequest)
  const checked = yield* checkRequest(params)
  if (Either.isLeft(checked)) return checked.left
  const session = yield* browserSession
  if (Option.isNone(session)) return yield* signInForm(params, checked.right.clientName)
  const principal = yield* chosenOrganization(params, session.value)
  if (Option.isNone(principal)) return notAMember()
  return yield* consent(params, checked.right, session.value, principal.value)
})

const signIn = (params: URLSearchParams, valid: ValidRequest) =>
  Effect.gen(function*() {
    const held = (yield* HttpServerRequest.HttpServerRequest).cookies[LOGIN_COOKIE] ?? ""
    if (!secretMatches(held, params.get("login_csrf") ?? "")) {
      return yield* signInForm(params, valid.clientName, "This sign-in form expired or did not come from this page; sign in again.", 403)
    }
    const email = params.get("email") ?? ""
    const password = params.get("password") ?? ""
    const opened = yield* Effect.either((yield* Accounts).login({ email, password }))
    if (Either.isLeft(opened)) {
      if (opened.left._tag !== "Unauthorized") return yield* Effect.fail(opened.left)
      return yield* signInForm(params, valid.clientName, "Invalid email or password.")
    }
    const secure = (yield* base).startsWith("https:")
    const query = new URLSearchParams(carried(params).map(([name, value]): [string, string] => [name, value])).toString()
    return yield* found(`/oauth/authorize?${query}`, 303).pipe(
      HttpServerResponse.setCookie(COOKIE, opened.right.session_token, {
        httpOnly: true,
        sameSite: "lax",
        secure,
        path: "/oauth",
        expires: new Date(opened.right.expires_at)
      }),
      Effect.orDie
    )
  })

const decide = (params: URLSearchParams, valid: ValidRequest) =>
  Effect.gen(function*() {
    const session = yield* browserSession
    if (Option.isNone(session)) return yield* signInForm(params, valid.clientName, "Your session ended; sign in again.")
    if (!csrfMatches(session.value.token, params.get("csrf_token") ?? "")) {
      return errorPage("This form expired or did not come from this page; start the connection again.", 403)
    }
    const authorization = yield* OAuthAuthorization
    if (params.get("decision") !== "approve") return found(authorization.deny(valid))
    const chosen = yield* chosenOrganization(params, session.value)
    if (Option.isNone(chosen)) return notAMember()
    const principal = chosen.value
    let spaces: ReadonlyArray<string> | null = null
    if (params.get("spaces_mode") === "some") {
      // Only the chosen organization's spaces count: a space of another one ticked by a forged form is dropped.
      const listed = yield* (yield* Spaces).list(principal, { limit: 500, offset: 0 })
      const known = new Set(listed.items.map((space) => space.space_id))
      spaces = [...new Set(params.getAll("space"))].filter((id) => known.has(id))
      if (spaces.length === 0) return yield* consent(params, valid, session.value, principal, "Tick at least one space, or choose all spaces.")
    }
    const write = params.get("access") === "write"
    return found(yield* authorization.approve(principal, valid, { write, spaces }))
  })

const authorizePost = Effect.gen(function*() {
  const params = yield* Effect.orElseSucceed(readFields, () => new URLSearchParams())
  const checked = yield* checkRequest(params)
  if (Either.isLeft(checked)) return checked.left
  switch (params.get("action")) {
    case "signin":
      return yield* signIn(params, checked.right)
    case "consent":
      return yield* decide(params, checked.right)
    default:
      return errorPage("The form is incomplete; start the connection again.")
  }
})

const token = Effect.gen(function*() {
  const params = yield* readFields
  const request = yield* Schema.decodeUnknown(TokenRequest)(single(params)).pipe(
    Effect.mapError(() => oauthError("invalid_request", "malformed token request"))
  )
  return oauthJson(yield* (yield* OAuthTokens).token(request, resourceOf(yield* base)))
})

const revoke = Effect.gen(function*() {
  const params = yield* readFields
  const request = yield* Schema.decodeUnknown(RevocationRequest)(single(params)).pipe(
    Effect.mapError(() => oauthError("invalid_request", "malformed revocation request"))
  )
  if (request.token === undefined || request.token === "") return yield* oauthError("invalid_request", "token is required")
  yield* (yield* OAuthTokens).revoke(request.token, request.client_id)
  return HttpServerResponse.empty({ status: 200, headers: noStore })
})

const register = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const body = yield* Effect.mapError(request.json, () => oauthError("invalid_client_metadata", "the registration must be a JSON object"))
  return oauthJson(yield* (yield* OAuthRegistration).register(body), 201)
})

const discovery = (document: (base: string) => unknown) => Effect.map(base, (url) => HttpServerResponse.unsafeJson(document(url)))

type Services = AppConfig | Accounts | Authenticator | Spaces | OAuthAuthorization | OAuthRegistration | OAuthTokens

const ROUTES = [
  ["GET", PROTECTED_RESOURCE_PATH],
  ["GET", `${PROTECTED_RESOURCE_PATH}/mcp`],
  ["GET", AUTHORIZATION_SERVER_PATH],
  ["POST", "/oauth/register"],
  ["GET", "/oauth/authorize"],
  ["POST", "/oauth/authorize"],
  ["POST", "/oauth/token"],
  ["POST", "/oauth/revoke"]
] as const

/** OAuth's routes and their preflights, for the route table; OAuth's refusals are its own (RFC 6749). */
export const OAUTH_ROUTES: RawRoutes = {
  routes: [...ROUTES, ...CROSS_ORIGIN.map(([path]) => ["OPTIONS", path] as const)],
  ownErrors: ["/oauth/"]
}

export const OAuthRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Services>()
    type Handler = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, Services | HttpServerRequest.HttpServerRequest>
    const serve = (handler: Handler) => renderOAuth(handler).pipe(Effect.provide(context))
    /** Served to any origin: the answer (refusals included) carries Access-Control-Allow-Origin. */
    const open = (handler: Handler) => serve(handler).pipe(Effect.map(HttpServerResponse.setHeaders(CORS)))
    for (const [path, methods] of CROSS_ORIGIN) yield* router.options(path, Effect.succeed(preflight(methods)))
    yield* router.get(PROTECTED_RESOURCE_PATH, open(discovery(protectedResourceMetadata)))
    yield* router.get(`${PROTECTED_RESOURCE_PATH}/mcp`, open(discovery(protectedResourceMetadata)))
    yield* router.get(AUTHORIZATION_SERVER_PATH, open(discovery(authorizationServerMetadata)))
    yield* router.post("/oauth/register", open(register))
    yield* router.get("/oauth/authorize", serve(authorizeGet))
    yield* router.post("/oauth/authorize", serve(authorizePost))
    yield* router.post("/oauth/token", open(token))
    yield* router.post("/oauth/revoke", open(revoke))
  })
).pipe(Layer.provide([OAuthAuthorization.Default, OAuthRegistration.Default, OAuthTokens.Default, Accounts.Default, Spaces.Default]))
