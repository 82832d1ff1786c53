import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { call, callRaw, signup } from "../support/Http.ts"
import { eachProfile } from "../support/Suite.ts"

const expectEnvelope = (reply: { status: number; headers: Record<string, string>; body: any }, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(Object.keys(reply.body)).toEqual(["error"])
  expect(reply.body.error.code).toBe(code)
  expect(typeof reply.body.error.message).toBe("string")
  expect(reply.body.error.message.length).toBeGreaterThan(0)
  expect(reply.body.error.request_id).toBe(reply.headers["x-request-id"])
  expect(JSON.stringify(reply.body)).not.toMatch(/at .*\.ts:\d+|stack/i)
}

eachProfile("error envelope and request ids", (it) => {
  it.effect("every response carries a generated X-Request-ID", () =>
    Effect.gen(function*() {
      const a = yield* call("GET", "/health")
      const b = yield* call("GET", "/health")
      expect(a.status).toBe(200)
      expect(a.body).toEqual({ status: "ok" })
      expect(a.headers["x-request-id"]).toMatch(/^req_[A-Za-z0-9]{24}$/)
      expect(b.headers["x-request-id"]).not.toBe(a.headers["x-request-id"])
    }))

  it.effect("a sane client request id is echoed, an unsafe one replaced", () =>
    Effect.gen(function*() {
      const echoed = yield* callRaw("GET", "/v1/nothing-here", { headers: { "x-request-id": "trace-42.a:b_c" } })
      expect(echoed.headers["x-request-id"]).toBe("trace-42.a:b_c")
      expect(echoed.body.error.request_id).toBe("trace-42.a:b_c")
      const replaced = yield* call("GET", "/health", { headers: { "x-request-id": "x".repeat(200) } })
      expect(replaced.headers["x-request-id"]).toMatch(/^req_/)
      const spaces = yield* call("GET", "/health", { headers: { "x-request-id": "bad id<script>" } })
      expect(spaces.headers["x-request-id"]).toMatch(/^req_/)
    }))

  it.effect("malformed JSON is 400 bad_request", () =>
    Effect.gen(function*() {
      expectEnvelope(yield* call("POST", "/auth/signup", { raw: "{\"email\": " }), 400, "bad_request")
      expectEnvelope(yield* call("POST", "/auth/signup", { raw: "" }), 400, "bad_request")
    }))

  it.effect("a JSON body labelled as a form or plain text is still read as JSON", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      for (const type of ["application/x-www-form-urlencoded", "text/plain;charset=UTF-8"]) {
        const reply = yield* call("POST", "/v1/spaces", {
          token: owner.token,
          raw: JSON.stringify({ space_id: `typed-${type.length}` }),
          headers: { "content-type": type }
        })
        expect(reply.status, type).toBe(201)
      }
      const wrong = yield* call("POST", "/v1/spaces", {
        token: owner.token,
        raw: "{\"space_id\": 5}",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expectEnvelope(wrong, 422, "validation_error")
      expect(wrong.body.error.message).toContain("space_id")
    }))

  it.effect("a body that is not an object is 400 bad_request", () =>
    Effect.gen(function*() {
      expectEnvelope(yield* call("POST", "/auth/signup", { raw: "[1,2]" }), 400, "bad_request")
      expectEnvelope(yield* call("POST", "/auth/signup", { raw: "\"text\"" }), 400, "bad_request")
    }))

  it.effect("a missing required field is 400 bad_request naming it", () =>
    Effect.gen(function*() {
      const reply = yield* call("POST", "/auth/signup", { offContract: { email: "a@b.example", password: "long enough" } })
      expectEnvelope(reply, 400, "bad_request")
      expect(reply.body.error.message).toContain("org_name")
    }))

  it.effect("an unknown field is 422 validation_error naming it", () =>
    Effect.gen(function*() {
      const reply = yield* call("POST", "/auth/signup", {
        offContract: { email: "a@b.example", password: "long enough", org_name: "x", colour: "blue" }
      })
      expectEnvelope(reply, 422, "validation_error")
      expect(reply.body.error.message).toContain("colour")
    }))

  it.effect("a malformed field is 422 validation_error", () =>
    Effect.gen(function*() {
      expectEnvelope(
        yield* call("POST", "/auth/signup", { json: { email: "not-an-email", password: "long enough", org_name: "x" } }),
        422,
        "validation_error"
      )
      expectEnvelope(
        yield* call("POST", "/auth/signup", { offContract: { email: "a@b.example", password: 12345678, org_name: "x" } }),
        422,
        "validation_error"
      )
      const owner = yield* signup()
      expectEnvelope(
        yield* call("POST", "/v1/api-keys", { token: owner.token, offContract: { name: "k", env: "staging" } }),
        422,
        "validation_error"
      )
      expectEnvelope(
        yield* call("POST", "/v1/api-keys", { token: owner.token, json: { name: "k", env: "test", expires_in_days: 0 } }),
        422,
        "validation_error"
      )
      expectEnvelope(
        yield* call("POST", "/v1/api-keys", { token: owner.token, json: { name: "k", env: "test", expires_in_days: 3651 } }),
        422,
        "validation_error"
      )
      expectEnvelope(
        yield* call("POST", "/v1/api-keys", { token: owner.token, json: { name: "k", env: "test", expires_in_days: 1.5 } }),
        422,
        "validation_error"
      )
      expectEnvelope(yield* call("GET", "/v1/spaces?limit=abc", { token: owner.token }), 422, "validation_error")
      expectEnvelope(yield* call("GET", "/v1/spaces?limit=0", { token: owner.token }), 422, "validation_error")
    }))

  it.effect("unknown routes are 404 not_found and wrong methods 405 with Allow", () =>
    Effect.gen(function*() {
      expectEnvelope(yield* callRaw("GET", "/v1/does-not-exist"), 404, "not_found")
      expectEnvelope(yield* callRaw("POST", "/nothing-here"), 404, "not_found")
      // "/" is the web console's page: other methods on it are 405 like any known path's.
      const onConsole = yield* callRaw("POST", "/")
      expectEnvelope(onConsole, 405, "method_not_allowed")
      expect(onConsole.headers["allow"]).toBe("GET")
      const wrong = yield* callRaw("DELETE", "/v1/api-keys")
      expectEnvelope(wrong, 405, "method_not_allowed")
      expect(wrong.headers["allow"]).toBe("GET, POST")
      expectEnvelope(yield* callRaw("PUT", "/v1/spaces/abc"), 405, "method_not_allowed")
    }))

  it.effect("bad input never becomes a 500", () =>
    Effect.gen(function*() {
      const owner = yield* signup()
      const inputs: Array<[string, string]> = [
        ["/v1/spaces", "{\"space_id\": \"\"}"],
        ["/v1/spaces", "{\"space_id\": \"../etc\"}"],
        ["/v1/spaces", "{\"space_id\": 5}"],
        ["/v1/spaces", "{\"name\": null}"],
        ["/v1/spaces", "null"],
        ["/v1/spaces", "{\"space_type\": \"weird\"}"],
        ["/v1/api-keys", "{\"name\": \"x\", \"env\": \"live\", \"expires_in_days\": \"7\"}"],
        ["/auth/login", "{\"email\": \"" + "a".repeat(5000) + "@x.io\", \"password\": \"x\"}"]
      ]
      for (const [path, raw] of inputs) {
        const reply = yield* callRaw("POST", path, { raw, token: owner.token })
        expect(reply.status, `${path} ${raw.slice(0, 40)}`).toBeGreaterThanOrEqual(400)
        expect(reply.status, `${path} ${raw.slice(0, 40)}`).toBeLessThan(500)
        expect(reply.body.error.request_id).toBe(reply.headers["x-request-id"])
      }
    }))

  it.effect("health, readiness, space types, OpenAPI and docs need no key", () =>
    Effect.gen(function*() {
      const ready = yield* call("GET", "/ready")
      expect(ready.status).toBe(200)
      expect(ready.body.status).toBe("ready")
      const types = yield* call("GET", "/v1/space-types")
      expect(types.status).toBe(200)
      expect(types.body.items.map((t: any) => t.space_type)).toContain("general")
      const openapi = yield* callRaw("GET", "/openapi.json")
      expect(openapi.status).toBe(200)
      expect(openapi.body.openapi).toMatch(/^3\./)
      expect(Object.keys(openapi.body.paths)).toEqual(
        expect.arrayContaining(["/v1/api-keys", "/v1/api-keys/{id}", "/v1/spaces", "/v1/spaces/{space_id}", "/auth/signup"])
      )
      // Every operation says what it does, and every one that needs a key or session declares it (so "Try it" sends one):
      // those without are exactly the ones that answer without (health, readiness, space types, sign-up and log-in,
      // the payment processor's callback, and OAuth's own endpoints).
      const operations = Object.entries(openapi.body.paths).flatMap(([path, item]: [string, any]) =>
        ["get", "post", "put", "patch", "delete"].filter((m) => item[m] !== undefined).map((m) => ({ key: `${m.toUpperCase()} ${path}`, operation: item[m] })))
      expect(operations.length).toBeGreaterThan(100)
      expect(operations.filter(({ operation }) => typeof operation.summary !== "string" || operation.summary === "").map(({ key }) => key)).toEqual([])
      // And a description, from the contract's words (src/domain/OperationDocs.ts) or the route's own.
      expect(operations.filter(({ operation }) => typeof operation.description !== "string" || operation.description === "").map(({ key }) => key)).toEqual([])
      expect(operations.filter(({ operation }) => !(operation.security?.length > 0)).map(({ key }) => key).sort()).toEqual([
        "GET /.well-known/oauth-authorization-server", "GET /.well-known/oauth-protected-resource", "GET /health",
        "GET /oauth/authorize", "GET /ready", "GET /v1/space-types", "POST /auth/login", "POST /auth/signup",
        "POST /oauth/authorize", "POST /oauth/register", "POST /oauth/revoke", "POST /oauth/token", "POST /v1/billing/webhook"
      ])
      expect(openapi.body.paths["/v1/record"].post.security).toEqual([{ bearer: [] }])
      // The document's version is the package's.
      const pkg = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "package.json"), "utf8"))
      expect(openapi.body.info.version).toBe(pkg.version)
      const docs = yield* callRaw("GET", "/docs")
      expect(docs.status).toBe(200)
      expect(docs.headers["content-type"]).toContain("text/html")
      // Its script is inline, and the reference is told not to fetch its fonts (the console's browser test loads the page).
      const page = typeof docs.body === "string" ? docs.body : JSON.stringify(docs.body)
      expect(page).toContain('"withDefaultFonts":false')
      expect(page).not.toMatch(/<script[^>]+src=/)
      expect(docs.headers["x-request-id"]).toBeDefined()
    }))

  it.effect("the OpenAPI document describes the proxy's three routes and /mcp, with their security and X-Svc-* headers", () =>
    Effect.gen(function*() {
      const openapi = (yield* callRaw("GET", "/openapi.json")).body
      const schemes = openapi.components.securitySchemes
      expect(schemes.bearer).toMatchObject({ type: "http", scheme: "bearer" })
      expect(schemes.apiKeyHeader).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" })
      const requestOf = (path: string) => openapi.paths[path].post.requestBody.content["application/json"].schema
      for (const [path, required] of [
        ["/v1/chat/completions", ["messages"]],
        ["/v1/responses", ["input"]],
        ["/v1/messages", ["messages", "max_tokens"]]
      ] as const) {
        const operation = openapi.paths[path]?.post
        expect(operation, path).toBeDefined()
        expect(requestOf(path).required, path).toEqual(required)
        expect(Object.keys(requestOf(path).properties), path).toEqual(expect.arrayContaining(["model", "stream", "space_id", "memory_limit"]))
        expect(operation.parameters.map((p: any) => `${p.in}:${p.name}`), path).toEqual(expect.arrayContaining([
          "header:X-Svc-Space-Id",
          "header:X-Svc-User-Id",
          "header:X-Svc-Agent-Id",
          "header:X-Svc-Session-Id",
          "header:X-Svc-Memory-Limit",
          "header:X-Svc-Memory-Tokens",
          "header:X-Svc-Auto-Record",
          "header:X-Svc-Memory"
        ]))
        expect(operation.security, path).toContainEqual({ bearer: [] })
        const answer = operation.responses["200"]
        expect(Object.keys(answer.content).sort(), path).toEqual(["application/json", "text/event-stream"])
        expect(answer.content["application/json"].schema.required, path).toEqual(expect.arrayContaining(["memories_injected", "space_id"]))
        expect(Object.keys(answer.headers), path).toEqual(["X-Svc-Memories-Injected", "X-Svc-Space-Id"])
        expect(operation.responses["400"].content["application/json"].schema.required, path).toEqual(["error"])
      }
      expect(openapi.paths["/v1/messages"].post.security).toContainEqual({ apiKeyHeader: [] })
      const mcp = openapi.paths["/mcp"]?.post
      expect(mcp.security).toEqual([{ bearer: [] }])
      expect(mcp.requestBody.content["application/json"].schema.required).toEqual(["jsonrpc", "method"])
      // Every reference resolves inside the document.
      const refs = [...JSON.stringify(openapi).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!)
      for (const ref of new Set(refs)) expect(openapi.components.schemas[ref], ref).toBeDefined()
    }))
})
