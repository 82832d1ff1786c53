import { expect } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option } from "effect"
import { type Account, addMember, call, callRaw, createKey, signup } from "../support/Http.ts"
import { MemoryProvider, REDIRECT } from "../support/McpOAuthProvider.ts"
import * as Browser from "../support/OAuthBrowser.ts"
import { authorizeUrl, type Choice, codeOf, pkce } from "../support/OAuthBrowser.ts"
import { eachProfile } from "../support/Suite.ts"

/** The test server's real address, as the harness's HttpClient reaches it (so the Host header, and the base, agree). */
const baseUrl = Effect.map(Effect.serviceOption(HttpServer.HttpServer), (server) =>
  HttpServer.formatAddress(Option.getOrThrow(server).address).replace("//0.0.0.0:", "//127.0.0.1:"))

const MCP_HEADERS = { accept: "application/json, text/event-stream" }
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
}
const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }

/** The browser of test/support/OAuthBrowser.ts, as an Effect. */
const browse = (base: string, authorizationUrl: string, account: Account, choice: Choice = {}) =>
  Effect.promise(() => Browser.browse(base, authorizationUrl, account, choice))

/** An MCP SDK client through the whole OAuth flow: 401, discovery, registration, the browser, finishAuth, reconnect. */
const connectWithOAuth = (account: Account, choice: Choice = {}) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const base = yield* baseUrl
      const provider = new MemoryProvider()
      const first = new StreamableHTTPClientTransport(new URL("/mcp", base), { authProvider: provider })
      const refused = yield* Effect.promise(() =>
        new Client({ name: "engram-oauth-test", version: "1.0.0" }).connect(first).then(() => undefined, (e: unknown) => e)
      )
      expect(refused).toBeInstanceOf(UnauthorizedError)
      expect(provider.authorizationUrl?.toString()).toMatch(new RegExp(`^${base}/oauth/authorize\\?`))
      const page = yield* browse(base, provider.authorizationUrl!.toString(), account, choice)
      expect(page.status, page.body).toBe(302)
      const { code, state } = codeOf(page.location)
      expect(state).toBe("state-xyz")
      yield* Effect.promise(() => first.finishAuth(code!))
      const client = new Client({ name: "engram-oauth-test", version: "1.0.0" })
      yield* Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { authProvider: provider })))
      return { client, provider, page, base }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

const tool = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<CallToolResult>).pipe(
    Effect.map((result) => {
      const first = result.content[0]
      const text = first?.type === "text" ? first.text : ""
      return { isError: result.isError === true, text, body: result.structuredContent ?? JSON.parse(text) }
    })
  )

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" }
})

const mcp = (token: string, body: unknown = TOOLS_LIST, headers: Record<string, string> = {}) =>
  call("POST", "/mcp", { token, json: body, headers: { ...MCP_HEADERS, ...headers } })

const registerClient = Effect.gen(function*() {
  const reply = yield* call("POST", "/oauth/register", { json: { client_name: "Manual Client", redirect_uris: [REDIRECT] } })
  expect(reply.status, reply.text).toBe(201)
  return reply.body.client_id as string
})

/** A client registered by hand and a code approved in the browser (no SDK): what the refusal tests start from. */
const manualCode = (account: Account, choice: Choice = {}, extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const base = yield* baseUrl
    const clientId = yield* registerClient
    const { challenge, verifier } = pkce()
    const page = yield* browse(base, authorizeUrl(base, clientId, challenge, extra), account, choice)
    expect(page.status, page.body).toBe(302)
    const { code } = codeOf(page.location)
    expect(code).toMatch(/^mcp_ac_/)
    return { base, clientId, verifier, code: code!, page }
  })

const exchange = (fields: Record<string, string>) => call("POST", "/oauth/token", form(fields))

const manualTokens = (account: Account, choice: Choice = {}, extra: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const flow = yield* manualCode(account, choice, extra)
    const reply = yield* exchange({
      grant_type: "authorization_code",
      code: flow.code,
      redirect_uri: REDIRECT,
      client_id: flow.clientId,
      code_verifier: flow.verifier,
      resource: `${flow.base}/mcp`
    })
    expect(reply.status, reply.text).toBe(200)
    return { ...flow, tokens: reply.body as { access_token: string; refresh_token: string; scope: string; expires_in: number } }
  })

eachProfile("MCP authorization (OAuth)", (it) => {
  it.scoped("/mcp without credentials is a 401 that points at the protected resource metadata", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const reply = yield* call("POST", "/mcp", { json: INITIALIZE, headers: MCP_HEADERS })
      expect(reply.status).toBe(401)
      expect(reply.body.error.code).toBe("unauthorized")
      expect(reply.headers["www-authenticate"]).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`)
    }))

  it.scoped("publishes the protected resource and authorization server metadata", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const resource = yield* call("GET", "/.well-known/oauth-protected-resource")
      expect(resource.status).toBe(200)
      expect(resource.body).toMatchObject({
        resource: `${base}/mcp`,
        authorization_servers: [base],
        bearer_methods_supported: ["header"],
        scopes_supported: ["memories:read", "memories:write"]
      })
      const server = yield* call("GET", "/.well-known/oauth-authorization-server")
      expect(server.status).toBe(200)
      expect(server.body).toMatchObject({
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        revocation_endpoint: `${base}/oauth/revoke`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
        scopes_supported: ["memories:read", "memories:write"]
      })
      // X-Forwarded-Proto and Host make the base when no PUBLIC_URL is set.
      const proxied = yield* call("GET", "/.well-known/oauth-authorization-server", {
        headers: { host: "memory.example.com", "x-forwarded-proto": "https" }
      })
      expect(proxied.body.issuer).toBe("https://memory.example.com")
      // A wrong method under /oauth is still the envelope's 405; only the protocol's own refusals are not.
      const wrongMethod = yield* callRaw("GET", "/oauth/token")
      expect(wrongMethod.status).toBe(405)
      expect(wrongMethod.body.error.code).toBe("method_not_allowed")
      const openapi = yield* callRaw("GET", "/openapi.json")
      expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining([
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/oauth/register",
        "/oauth/authorize",
        "/oauth/token",
        "/oauth/revoke"
      ]))
    }))

  it.scoped("the MCP SDK discovers, registers, signs in, consents, exchanges the code, lists tools, records and retrieves", () =>
    Effect.gen(function*() {
      const account = yield* signup("oauth")
      const { client, page, provider } = yield* connectWithOAuth(account)
      // The pages: a labelled sign-in form, an HttpOnly SameSite=Lax session cookie, a consent naming client and organization.
      expect(page.signInHtml).toContain(`<label for="email">Email</label>`)
      expect(page.signInHtml).toContain(`<label for="password">Password</label>`)
      expect(page.signedInStatus).toBe(303)
      expect(page.setCookie).toMatch(/HttpOnly/)
      expect(page.setCookie).toMatch(/SameSite=Lax/)
      expect(page.consentHtml).toContain("Test Assistant")
      expect(page.consentHtml).toContain("oauth org")
      expect(page.consentHtml).toContain("Read and write memories")
      expect(provider.client?.client_id).toMatch(/^mcpc_/)
      expect(provider.saved?.access_token).toMatch(/^mcp_at_/)
      expect(provider.saved?.refresh_token).toMatch(/^mcp_rt_/)
      expect(provider.saved?.expires_in).toBe(3600)

      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["record", "retrieve", "list_spaces"]))
      const recorded = yield* tool(client, "record", { space_id: "oauth-notes", content: "Audrey plays the violin every Sunday." })
      expect(recorded.isError, recorded.text).toBe(false)
      const memoryId = recorded.body.memories[0].memory_id as string
      const found = yield* tool(client, "retrieve", { space_id: "oauth-notes", query: "What instrument does Audrey play?" })
      expect(found.isError, found.text).toBe(false)
      expect(found.body.results[0].memory_id).toBe(memoryId)

      // The memory is the signed-in user's organization's: visible to its session over the HTTP API.
      const http = yield* call("POST", "/v1/retrieve", { token: account.token, json: { space_id: "oauth-notes", query: "violin" } })
      expect(http.body.results[0].memory_id).toBe(memoryId)
      // The access token is for /mcp only.
      const elsewhere = yield* call("GET", "/v1/spaces", { token: provider.saved!.access_token })
      expect(elsewhere.status).toBe(401)
    }))

  it.scoped("a refresh rotates the tokens; reusing the old refresh token revokes the whole grant", () =>
    Effect.gen(function*() {
      const account = yield* signup("refresh")
      const { base, clientId, tokens } = yield* manualTokens(account)
      expect((yield* mcp(tokens.access_token)).status).toBe(200)

      const refreshed = yield* exchange({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId, resource: `${base}/mcp` })
      expect(refreshed.status, refreshed.text).toBe(200)
      expect(refreshed.headers["cache-control"]).toBe("no-store")
      expect(refreshed.body.access_token).toMatch(/^mcp_at_/)
      expect(refreshed.body.access_token).not.toBe(tokens.access_token)
      expect(refreshed.body.refresh_token).not.toBe(tokens.refresh_token)
      const newest = refreshed.body.access_token as string
      const listed = yield* mcp(newest)
      expect(listed.status).toBe(200)
      expect(listed.text).toContain("retrieve")

      // The old refresh token is refused, and its reuse revokes every token of the grant.
      const reused = yield* exchange({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
      expect(reused.status).toBe(400)
      expect(reused.body).toMatchObject({ error: "invalid_grant" })
      expect(reused.body.error_description).toMatch(/already used; the whole grant is revoked/)
      expect(reused.headers["cache-control"]).toBe("no-store")
      const after = yield* mcp(newest)
      expect(after.status).toBe(401)
      expect(after.headers["www-authenticate"]).toBe(
        `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource"`
      )
      const successor = yield* exchange({ grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: clientId })
      expect(successor.body.error).toBe("invalid_grant")
    }))

  it.scoped("revocation ends an access token, or a refresh token with its grant; unknown tokens answer 200", () =>
    Effect.gen(function*() {
      const account = yield* signup("revoke")
      const { clientId, tokens } = yield* manualTokens(account)
      expect((yield* mcp(tokens.access_token)).status).toBe(200)
      const revoked = yield* call("POST", "/oauth/revoke", form({ token: tokens.access_token, client_id: clientId }))
      expect(revoked.status).toBe(200)
      expect((yield* mcp(tokens.access_token)).status).toBe(401)
      // The refresh token still works until it is revoked too, which revokes its grant.
      const refreshed = yield* exchange({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
      expect(refreshed.status, refreshed.text).toBe(200)
      expect((yield* mcp(refreshed.body.access_token)).status).toBe(200)
      const revokedRefresh = yield* call("POST", "/oauth/revoke", form({ token: refreshed.body.refresh_token }))
      expect(revokedRefresh.status).toBe(200)
      expect((yield* mcp(refreshed.body.access_token)).status).toBe(401)
      const again = yield* exchange({ grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token, client_id: clientId })
      expect(again.body.error).toBe("invalid_grant")
      const unknown = yield* call("POST", "/oauth/revoke", form({ token: "mcp_at_nothing-like-this" }))
      expect(unknown.status).toBe(200)
    }))

  it.scoped("connected clients: listed on a session (a key gets 401), a member sees only their own, revoking one stops it at once", () =>
    Effect.gen(function*() {
      const owner = yield* signup("connected")
      const { tokens } = yield* manualTokens(owner)
      const member = yield* addMember(owner, "member")
      expect((yield* mcp(tokens.access_token)).status).toBe(200)

      const listed = yield* call("GET", "/v1/oauth/grants", { token: owner.token })
      expect(listed.status, listed.text).toBe(200)
      expect(listed.body.total).toBe(1)
      expect(listed.body.items[0]).toMatchObject({
        client_name: "Manual Client",
        email: owner.email,
        scope: expect.stringContaining("memories:read"),
        spaces: null,
        last_used_at: expect.any(String)
      })
      const key = (yield* createKey(owner.token)).raw_key
      expect((yield* call("GET", "/v1/oauth/grants", { token: key })).body.error.code).toBe("session_required")

      // A member of the organization sees and revokes only their own grants: not the owner's.
      const own = yield* call("GET", "/v1/oauth/grants", { token: member.token })
      expect(own.body.items).toEqual([])
      const ownersGrant = listed.body.items[0].id
      expect((yield* call("DELETE", `/v1/oauth/grants/${ownersGrant}`, { token: member.token })).status).toBe(404)
      expect((yield* mcp(tokens.access_token)).status).toBe(200)

      // The owner revokes it: its access token and refresh token stop at once, and it leaves the list.
      expect((yield* call("DELETE", `/v1/oauth/grants/${ownersGrant}`, { token: owner.token })).status).toBe(204)
      expect((yield* mcp(tokens.access_token)).status).toBe(401)
      const refreshed = yield* exchange({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: listed.body.items[0].client_id })
      expect(refreshed.body.error).toBe("invalid_grant")
      expect((yield* call("GET", "/v1/oauth/grants", { token: owner.token })).body.items).toEqual([])
      expect((yield* call("DELETE", `/v1/oauth/grants/${ownersGrant}`, { token: owner.token })).status).toBe(404)
    }))

  it.scoped("token requests are refused with the RFC's errors: wrong verifier, code reuse, another resource, bad grant type", () =>
    Effect.gen(function*() {
      const account = yield* signup("pkce")
      const flow = yield* manualCode(account)
      const wrong = yield* exchange({
        grant_type: "authorization_code",
        code: flow.code,
        redirect_uri: REDIRECT,
        client_id: flow.clientId,
        code_verifier: pkce().verifier
      })
      expect(wrong.status).toBe(400)
      expect(wrong.body).toMatchObject({ error: "invalid_grant" })
      expect(typeof wrong.body.error_description).toBe("string")
      expect(wrong.headers["cache-control"]).toBe("no-store")
      // The code was spent by the failed attempt: the right verifier comes too late.
      const late = yield* exchange({
        grant_type: "authorization_code",
        code: flow.code,
        redirect_uri: REDIRECT,
        client_id: flow.clientId,
        code_verifier: flow.verifier
      })
      expect(late.body.error).toBe("invalid_grant")

      const other = yield* manualCode(account)
      const target = yield* exchange({
        grant_type: "authorization_code",
        code: other.code,
        redirect_uri: REDIRECT,
        client_id: other.clientId,
        code_verifier: other.verifier,
        resource: "https://elsewhere.example/mcp"
      })
      expect(target.status).toBe(400)
      expect(target.body.error).toBe("invalid_target")

      // JSON bodies are accepted too; unknown grant types and clients are named.
      const json = yield* call("POST", "/oauth/token", { json: { grant_type: "client_credentials", client_id: other.clientId } })
      expect(json.status).toBe(400)
      expect(json.body.error).toBe("unsupported_grant_type")
      const client = yield* exchange({
        grant_type: "authorization_code",
        code: "mcp_ac_x",
        redirect_uri: REDIRECT,
        client_id: "mcpc_unknown",
        code_verifier: other.verifier
      })
      expect(client.body.error).toBe("invalid_client")
      const missing = yield* exchange({ grant_type: "authorization_code", client_id: other.clientId })
      expect(missing.body.error).toBe("invalid_request")
    }))

  it.scoped("the authorize endpoint shows a page for an unregistered redirect URI and redirects other refusals", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const clientId = yield* registerClient
      const { challenge } = pkce()
      const foreign = yield* Effect.promise(() =>
        fetch(authorizeUrl(base, clientId, challenge, { redirect_uri: "https://evil.example/callback" }), { redirect: "manual" })
      )
      expect(foreign.status).toBe(400)
      expect(foreign.headers.get("location")).toBeNull()
      expect(foreign.headers.get("content-type")).toMatch(/^text\/html/)
      expect(yield* Effect.promise(() => foreign.text())).toContain("redirect_uri is not one this application registered")

      const unknownClient = yield* Effect.promise(() => fetch(authorizeUrl(base, "mcpc_nope", challenge), { redirect: "manual" }))
      expect(unknownClient.status).toBe(400)
      expect(unknownClient.headers.get("location")).toBeNull()

      const refusedWith = (extra: Record<string, string>) =>
        Effect.promise(async () => {
          const response = await fetch(authorizeUrl(base, clientId, challenge, extra), { redirect: "manual" })
          expect(response.status).toBe(302)
          return codeOf(response.headers.get("location"))
        })
      const plain = yield* refusedWith({ code_challenge_method: "plain" })
      expect(plain.url.origin + plain.url.pathname).toBe(REDIRECT)
      expect(plain.error).toBe("invalid_request")
      expect(plain.state).toBe("s1")
      expect((yield* refusedWith({ code_challenge: "" })).error).toBe("invalid_request")
      expect((yield* refusedWith({ resource: "https://elsewhere.example/mcp" })).error).toBe("invalid_target")
      expect((yield* refusedWith({ response_type: "token" })).error).toBe("unsupported_response_type")
      expect((yield* refusedWith({ scope: "admin" })).error).toBe("invalid_scope")

      // A loopback redirect URI matches on any port (RFC 8252).
      const otherPort = yield* Effect.promise(() =>
        fetch(authorizeUrl(base, clientId, challenge, { redirect_uri: "http://127.0.0.1:50999/callback" }), { redirect: "manual" })
      )
      expect(otherPort.status).toBe(200)
      expect(yield* Effect.promise(() => otherPort.text())).toContain("Sign in to Engram")
    }))

  it.scoped("registration accepts https and loopback redirect URIs of public clients only", () =>
    Effect.gen(function*() {
      const ok = yield* call("POST", "/oauth/register", {
        json: { client_name: "Desk", redirect_uris: ["https://app.example.com/cb", "http://localhost/cb"] }
      })
      expect(ok.status).toBe(201)
      expect(ok.body).toMatchObject({ client_name: "Desk", token_endpoint_auth_method: "none", redirect_uris: ["https://app.example.com/cb", "http://localhost/cb"] })
      const plainHttp = yield* call("POST", "/oauth/register", { json: { redirect_uris: ["http://app.example.com/cb"] } })
      expect(plainHttp.status).toBe(400)
      expect(plainHttp.body.error).toBe("invalid_redirect_uri")
      const none = yield* call("POST", "/oauth/register", { json: { client_name: "x" } })
      expect(none.body.error).toBe("invalid_redirect_uri")
      const secret = yield* call("POST", "/oauth/register", {
        json: { redirect_uris: ["https://app.example.com/cb"], token_endpoint_auth_method: "client_secret_basic" }
      })
      expect(secret.status).toBe(400)
      expect(secret.body.error).toBe("invalid_client_metadata")
    }))

  it.scoped("denying redirects with access_denied; a consent without the session's CSRF token is refused", () =>
    Effect.gen(function*() {
      const account = yield* signup("deny")
      const base = yield* baseUrl
      const clientId = yield* registerClient
      const denied = yield* browse(base, authorizeUrl(base, clientId, pkce().challenge), account, { decision: "deny" })
      expect(denied.status).toBe(302)
      const answer = codeOf(denied.location)
      expect(answer.error).toBe("access_denied")
      expect(answer.code).toBeNull()
      const forged = yield* browse(base, authorizeUrl(base, clientId, pkce().challenge), account, { csrf: "forged" })
      expect(forged.status).toBe(403)
      expect(forged.location).toBeNull()
    }))

  it.scoped("a sign-in posted without the form's own secret (a forged, cross-site sign-in) signs nobody in", () =>
    Effect.gen(function*() {
      const account = yield* signup("login-csrf")
      const base = yield* baseUrl
      const url = authorizeUrl(base, yield* registerClient, pkce().challenge)
      const first = yield* Effect.promise(() => fetch(url, { redirect: "manual" }))
      const form = Browser.postForm(yield* Effect.promise(() => first.text()))
      const secret = form.fields.get("login_csrf") ?? ""
      expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/)
      expect(first.headers.getSetCookie().join("\n")).toMatch(new RegExp(`engram_oauth_login=${secret};.*HttpOnly.*SameSite=Lax`))
      form.fields.set("email", account.email)
      form.fields.set("password", account.password)
      const post = (fields: URLSearchParams, cookie?: string) =>
        Effect.promise(() => fetch(new URL(form.action!, base), { method: "POST", body: fields, redirect: "manual", headers: cookie ? { cookie } : {} }))
      const sessionSet = (response: Response) => response.headers.getSetCookie().some((c) => c.startsWith("engram_oauth_session="))

      // Another site can post the form (no cookie reaches us cross-site) but cannot read the secret.
      const withoutCookie = yield* post(form.fields)
      expect(withoutCookie.status).toBe(403)
      expect(sessionSet(withoutCookie)).toBe(false)
      const page = yield* Effect.promise(() => withoutCookie.text())
      expect(page).toContain("did not come from this page")
      // The page offers a fresh form that works.
      expect(Browser.postForm(page).fields.get("login_csrf")).toMatch(/^[A-Za-z0-9_-]{32}$/)
      const wrong = new URLSearchParams(form.fields)
      wrong.set("login_csrf", "x".repeat(32))
      const withWrongSecret = yield* post(wrong, `engram_oauth_login=${secret}`)
      expect(withWrongSecret.status).toBe(403)
      expect(sessionSet(withWrongSecret)).toBe(false)
      const noSecret = new URLSearchParams(form.fields)
      noSecret.delete("login_csrf")
      expect((yield* post(noSecret, `engram_oauth_login=${secret}`)).status).toBe(403)

      const genuine = yield* post(form.fields, `engram_oauth_login=${secret}`)
      expect(genuine.status).toBe(303)
      expect(sessionSet(genuine)).toBe(true)
    }))

  it.scoped("a token granted one space cannot reach another", () =>
    Effect.gen(function*() {
      const account = yield* signup("spaces")
      for (const space_id of ["granted-space", "other-space"]) {
        const made = yield* call("POST", "/v1/spaces", { token: account.token, json: { space_id } })
        expect(made.status).toBe(201)
      }
      const { client, page } = yield* connectWithOAuth(account, { spaces: ["granted-space"] })
      expect(page.consent.checkboxes).toEqual(expect.arrayContaining(["granted-space", "other-space"]))
      const inside = yield* tool(client, "record", { space_id: "granted-space", content: "Tim reads fantasy novels." })
      expect(inside.isError, inside.text).toBe(false)
      const outside = yield* tool(client, "retrieve", { space_id: "other-space", query: "novels" })
      expect(outside.isError).toBe(true)
      expect(outside.body.error.code).toBe("forbidden")
      const written = yield* tool(client, "record", { space_id: "other-space", content: "Not allowed here." })
      expect(written.body.error.code).toBe("forbidden")
      const listed = yield* tool(client, "list_spaces", {})
      expect(listed.body.items.map((s: { space_id: string }) => s.space_id)).toEqual(["granted-space"])
    }))

  it.scoped("a read-only token can retrieve but not record", () =>
    Effect.gen(function*() {
      const account = yield* signup("reader")
      const key = (yield* createKey(account.token)).raw_key
      const seeded = yield* call("POST", "/v1/memories", { token: key, json: { space_id: "shelf", content: "Ada keeps bees." } })
      expect(seeded.status, seeded.text).toBeLessThan(300)
      const { tokens } = yield* manualTokens(account, {}, { scope: "memories:read" })
      expect(tokens.scope).toBe("memories:read")
      const recordCall = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "record", arguments: { space_id: "shelf", content: "Ada also keeps goats." } } }
      const refused = yield* mcp(tokens.access_token, recordCall)
      expect(refused.status).toBe(200)
      expect(refused.body.result.isError).toBe(true)
      expect(JSON.parse(refused.body.result.content[0].text).error.code).toBe("forbidden")
      const retrieveCall = { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "retrieve", arguments: { space_id: "shelf", query: "bees" } } }
      const read = yield* mcp(tokens.access_token, retrieveCall)
      expect(read.body.result.isError ?? false).toBe(false)
      expect(read.body.result.content[0].text).toContain("bees")
      // Chosen on the consent page: a write request approved as read-only.
      const downgraded = yield* manualTokens(account, { access: "read" })
      expect(downgraded.tokens.scope).toBe("memories:read")
      const refusedToo = yield* mcp(downgraded.tokens.access_token, recordCall)
      expect(JSON.parse(refusedToo.body.result.content[0].text).error.code).toBe("forbidden")
    }))

  it.scoped("a refresh token of a grant revoked from the console is refused because the grant was revoked, used or not", () =>
    Effect.gen(function*() {
      const owner = yield* signup("console-revoked")
      const { clientId, tokens } = yield* manualTokens(owner)
      const refreshed = yield* exchange({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
      expect(refreshed.status, refreshed.text).toBe(200)
      const grants = yield* call("GET", "/v1/oauth/grants", { token: owner.token })
      expect((yield* call("DELETE", `/v1/oauth/grants/${grants.body.items[0].id}`, { token: owner.token })).status).toBe(204)
      // The current refresh token (twice: the first attempt spends nothing), and the one the refresh retired.
      for (const refreshToken of [refreshed.body.refresh_token, refreshed.body.refresh_token, tokens.refresh_token]) {
        const refused = yield* exchange({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId })
        expect(refused.status).toBe(400)
        expect(refused.body.error).toBe("invalid_grant")
        expect(refused.body.error_description).toBe("the grant of this refresh token was revoked; sign in again")
      }
    }))

  it.scoped("a user in several organizations picks the one the client is granted; the spaces follow it; the server checks the choice", () =>
    Effect.gen(function*() {
      const user = yield* signup("chooser")
      const team = yield* signup("team")
      const stranger = yield* signup("stranger")
      const joined = yield* call("POST", "/v1/orgs/me/members", { token: team.token, json: { email: user.email, role: "member" } })
      expect(joined.status, joined.text).toBe(201)
      expect((yield* call("POST", `/v1/invitations/${joined.body.id}/accept`, { token: user.token })).status).toBe(200)
      for (const [account, space_id] of [[user, "home-notes"], [team, "team-notes"]] as const) {
        expect((yield* call("POST", "/v1/spaces", { token: account.token, json: { space_id } })).status).toBe(201)
      }
      const base = yield* baseUrl
      const clientId = yield* registerClient
      const { challenge, verifier } = pkce()
      const signedIn = yield* Effect.promise(() => Browser.signIn(base, authorizeUrl(base, clientId, challenge), user))

      // The page opens on the user's default organization, with a chooser listing exactly the organizations they belong to.
      const chooser = Browser.readForms(signedIn.consentHtml).find((form) => form.method === "get")
      expect(chooser?.action).toBe("/oauth/authorize")
      const options = chooser!.selects.get("org_id") ?? []
      expect(options.map((o) => o.value).sort()).toEqual([user.orgId, team.orgId].sort())
      expect(options.find((o) => o.selected)?.value).toBe(user.orgId)
      expect(options.find((o) => o.value === team.orgId)?.label).toBe("team org (member)")
      expect(signedIn.consentHtml).toContain(`<label for="org">`)
      const home = Browser.postForm(signedIn.consentHtml)
      expect(home.fields.get("org_id")).toBe(user.orgId)
      expect(home.checkboxes).toEqual(["home-notes"])

      // Choosing the team (the chooser's GET) reloads the page for it: its name, its spaces, its org_id in the consent form.
      const pick = (orgId: string) => {
        const url = new URL(chooser!.action!, base)
        url.search = new URLSearchParams([...chooser!.fields, ["org_id", orgId]]).toString()
        return Effect.promise(() => Browser.open(url, signedIn.cookie))
      }
      const teamPage = yield* pick(team.orgId)
      expect(teamPage.status, teamPage.html).toBe(200)
      expect(teamPage.html).toContain("<strong>team org</strong>")
      const teamForm = Browser.postForm(teamPage.html)
      expect(teamForm.fields.get("org_id")).toBe(team.orgId)
      expect(teamForm.checkboxes).toEqual(["team-notes"])
      expect(Browser.readForms(teamPage.html).find((f) => f.method === "get")?.selects.get("org_id")?.find((o) => o.selected)?.value)
        .toBe(team.orgId)

      // An organization the user is not in: refused on the page and in a forged consent form (no code).
      const foreign = yield* pick(stranger.orgId)
      expect(foreign.status).toBe(403)
      expect(foreign.html).toContain("not a member of that organization")
      expect(foreign.html).not.toContain("stranger org")
      const forged = yield* Effect.promise(() => Browser.decide(base, teamPage.html, signedIn.cookie, { orgId: stranger.orgId }))
      expect(forged.status).toBe(403)
      expect(forged.location).toBeNull()
      // A space of the home organization posted with the team chosen is not the team's: the page asks again.
      const mixed = yield* Effect.promise(() => Browser.decide(base, teamPage.html, signedIn.cookie, { spaces: ["home-notes"] }))
      expect(mixed.status).toBe(400)
      expect(mixed.body).toContain("Tick at least one space")

      // Approved for the team: the token acts there, in the space ticked, as the member the user is.
      const approved = yield* Effect.promise(() => Browser.decide(base, teamPage.html, signedIn.cookie, { spaces: ["team-notes"] }))
      expect(approved.status, approved.body).toBe(302)
      const { code } = codeOf(approved.location)
      const exchanged = yield* exchange({ grant_type: "authorization_code", code: code!, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier })
      expect(exchanged.status, exchanged.text).toBe(200)
      const accessToken: string = exchanged.body.access_token
      const toolCall = (name: string, args: Record<string, unknown>) =>
        Effect.map(mcp(accessToken, { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name, arguments: args } }), (reply) =>
          JSON.parse(reply.body.result.content[0].text))
      expect((yield* toolCall("list_spaces", {})).items.map((s: { space_id: string }) => s.space_id)).toEqual(["team-notes"])
      const recorded = yield* toolCall("record", { space_id: "team-notes", content: "Imani books the team offsite in Lisbon." })
      const memoryId = recorded.memories[0].memory_id
      const seen = yield* call("POST", "/v1/retrieve", { token: team.token, json: { space_id: "team-notes", query: "offsite Lisbon" } })
      expect(seen.body.results[0].memory_id).toBe(memoryId)
      // The grant belongs to the team: listed there (for its owner), not in the user's home organization.
      const teamGrants = yield* call("GET", "/v1/oauth/grants", { token: team.token })
      expect(teamGrants.body.items.map((g: { email: string }) => g.email)).toEqual([user.email])
      expect((yield* call("GET", "/v1/oauth/grants", { token: user.token })).body.items).toEqual([])
    }))

  it.scoped("CORS: discovery, registration, token and revocation answer preflights and any origin; the authorize page and /mcp do not", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const origin = "https://inspector.example"
      for (
        const [path, method] of [
          ["/.well-known/oauth-protected-resource", "GET"],
          ["/.well-known/oauth-protected-resource/mcp", "GET"],
          ["/.well-known/oauth-authorization-server", "GET"],
          ["/oauth/register", "POST"],
          ["/oauth/token", "POST"],
          ["/oauth/revoke", "POST"]
        ] as const
      ) {
        const preflight = yield* Effect.promise(() =>
          fetch(`${base}${path}`, {
            method: "OPTIONS",
            headers: { origin, "access-control-request-method": method, "access-control-request-headers": "content-type,mcp-protocol-version" }
          })
        )
        expect(preflight.status, path).toBe(204)
        expect(preflight.headers.get("access-control-allow-origin"), path).toBe("*")
        expect(preflight.headers.get("access-control-allow-methods")?.split(", "), path).toContain(method)
        const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(", ")
        expect(allowed, path).toEqual(expect.arrayContaining(["content-type", "mcp-protocol-version", "authorization"]))
        expect(preflight.headers.get("access-control-max-age"), path).toBe("86400")
      }

      const crossOrigin = { origin }
      const metadata = yield* call("GET", "/.well-known/oauth-authorization-server", { headers: crossOrigin })
      expect(metadata.headers["access-control-allow-origin"]).toBe("*")
      const registered = yield* call("POST", "/oauth/register", { json: { client_name: "Web", redirect_uris: [REDIRECT] }, headers: crossOrigin })
      expect(registered.status).toBe(201)
      expect(registered.headers["access-control-allow-origin"]).toBe("*")
      const badRegistration = yield* call("POST", "/oauth/register", { json: { client_name: "x" }, headers: crossOrigin })
      expect(badRegistration.status).toBe(400)
      expect(badRegistration.headers["access-control-allow-origin"]).toBe("*")
      const account = yield* signup("cors")
      const { clientId, tokens } = yield* manualTokens(account)
      const refreshed = yield* call("POST", "/oauth/token", {
        ...form({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId }),
        headers: { ...form({}).headers, ...crossOrigin }
      })
      expect(refreshed.status, refreshed.text).toBe(200)
      expect(refreshed.headers["access-control-allow-origin"]).toBe("*")
      const refused = yield* call("POST", "/oauth/token", {
        ...form({ grant_type: "refresh_token", refresh_token: "mcp_rt_unknown", client_id: clientId }),
        headers: { ...form({}).headers, ...crossOrigin }
      })
      expect(refused.body.error).toBe("invalid_grant")
      expect(refused.headers["access-control-allow-origin"]).toBe("*")
      const revoked = yield* call("POST", "/oauth/revoke", { ...form({ token: refreshed.body.access_token }), headers: { ...form({}).headers, ...crossOrigin } })
      expect(revoked.status).toBe(200)
      expect(revoked.headers["access-control-allow-origin"]).toBe("*")

      // The authorize page is for the user's own browser tab, not for scripts of other origins; /mcp keeps its Origin rules.
      const pagePreflight = yield* Effect.promise(() =>
        fetch(`${base}/oauth/authorize`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } })
      )
      expect(pagePreflight.status).toBe(405)
      expect(pagePreflight.headers.get("access-control-allow-origin")).toBeNull()
      const page = yield* Effect.promise(() => fetch(authorizeUrl(base, clientId, pkce().challenge), { headers: crossOrigin }))
      expect(page.status).toBe(200)
      expect(page.headers.get("access-control-allow-origin")).toBeNull()
      const foreign = yield* mcp(refreshed.body.access_token, INITIALIZE, crossOrigin)
      expect(foreign.status).toBe(403)
      expect(foreign.headers["access-control-allow-origin"]).toBeUndefined()
    }))

  it.scoped("/mcp refuses a foreign browser Origin with 403 and serves loopback origins", () =>
    Effect.gen(function*() {
      const account = yield* signup("origin")
      const key = (yield* createKey(account.token)).raw_key
      const evil = yield* mcp(key, INITIALIZE, { origin: "http://evil.example" })
      expect(evil.status).toBe(403)
      expect(evil.body.error.code).toBe("forbidden")
      expect(evil.body.error.request_id).toBe(evil.headers["x-request-id"])
      const rebound = yield* mcp(key, INITIALIZE, { origin: "http://evil.example", host: "evil.example" })
      expect(rebound.status).toBe(403)
      // The conformance suite's dns-rebinding-protection: a foreign Host reaching loopback, no Origin.
      const foreignHost = yield* call("POST", "/mcp", { json: INITIALIZE, headers: { ...MCP_HEADERS, host: "evil.example.com" } })
      expect(foreignHost.status).toBe(403)
      expect(foreignHost.body.error.code).toBe("forbidden")
      const localHost = yield* call("POST", "/mcp", { json: INITIALIZE, headers: { ...MCP_HEADERS, host: "localhost" } })
      expect(localHost.status).toBe(401)
      const anonymous = yield* call("POST", "/mcp", { json: INITIALIZE, headers: { ...MCP_HEADERS, origin: "http://evil.example" } })
      expect(anonymous.status).toBe(403)
      for (const origin of ["http://localhost:5173", "http://127.0.0.1:8080", "https://[::1]:3000"]) {
        const local = yield* mcp(key, INITIALIZE, { origin })
        expect(local.status, origin).toBe(200)
        expect(local.body.result.serverInfo.name).toBe("engram")
      }
      const none = yield* mcp(key, INITIALIZE)
      expect(none.status).toBe(200)
    }))
})

eachProfile("MCP authorization with MCP_ALLOWED_ORIGINS", (it) => {
  it.scoped("an origin listed in MCP_ALLOWED_ORIGINS is served; others still get 403", () =>
    Effect.gen(function*() {
      const account = yield* signup("allowed")
      const key = (yield* createKey(account.token)).raw_key
      expect((yield* mcp(key, INITIALIZE, { origin: "https://console.example.com" })).status).toBe(200)
      expect((yield* mcp(key, INITIALIZE, { origin: "https://other.example.com" })).status).toBe(403)
      // Its host may be named on loopback (a local proxy forwarding Host); other hosts may not.
      expect((yield* mcp(key, INITIALIZE, { host: "console.example.com" })).status).toBe(200)
      expect((yield* mcp(key, INITIALIZE, { host: "other.example.com" })).status).toBe(403)
    }))
}, { mcpAllowedOrigins: ["https://console.example.com"] })
