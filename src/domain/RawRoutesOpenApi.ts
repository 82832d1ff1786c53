/**
 * The routes served beside the HttpApi (the proxy's three wire formats and
 * `/mcp`) in the OpenAPI document: their bodies are not one Schema the
 * HttpApi could decode, so they are described here, in outline, and merged
 * into the generated document.
 */
import { JSONSchema, Schema } from "effect"
import { MemoryLimit, MemoryTokenBudget } from "./ChatSettings.ts"
import { BlockOrder, ScopeId } from "./Memories.ts"
import { SpaceId } from "./Spaces.ts"

/** Fields no format knows are forwarded to the provider unchanged. */
const Forwarded = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const tunableFields = {
  space_id: Schema.optional(SpaceId).annotations({ description: "Memory space (default `default`); wins over X-Svc-Space-Id." }),
  user_id: Schema.optional(ScopeId),
  agent_id: Schema.optional(ScopeId),
  session_id: Schema.optional(ScopeId),
  memory_limit: Schema.optional(MemoryLimit),
  memory_token_budget: Schema.optional(MemoryTokenBudget),
  auto_record: Schema.optional(Schema.Boolean),
  memory: Schema.optional(Schema.Boolean).annotations({ description: "false skips recall for this call." }),
  block_order: Schema.optional(BlockOrder).annotations({
    description: "Order of the injected block's lines: relevance (default) or stable (as stored; raises cache_prefix_tokens)."
  })
}

const Content = Schema.Union(Schema.String, Schema.Array(Schema.Unknown)).annotations({
  description: "A string, or typed parts of which only those carrying text are used."
})
const Message = Schema.Struct({ role: Schema.String, content: Content }, Forwarded)

const memoryFields = {
  memories_injected: Schema.Int,
  space_id: Schema.String
}

const ChatCompletionsRequest = Schema.Struct({
  messages: Schema.Array(Message),
  model: Schema.optional(Schema.String),
  stream: Schema.optional(Schema.Boolean),
  stream_options: Schema.optional(Schema.Struct({ include_usage: Schema.optional(Schema.Boolean) })),
  max_tokens: Schema.optional(Schema.Int),
  temperature: Schema.optional(Schema.Number),
  ...tunableFields
}, Forwarded)

const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(Schema.Struct({
    index: Schema.Int,
    message: Schema.Struct({ role: Schema.Literal("assistant"), content: Schema.String }),
    finish_reason: Schema.Literal("stop", "length")
  })),
  usage: Schema.Struct({ prompt_tokens: Schema.Int, completion_tokens: Schema.Int, total_tokens: Schema.Int }),
  ...memoryFields
})

const ResponsesRequest = Schema.Struct({
  input: Schema.Union(Schema.String, Schema.Array(Message)),
  instructions: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  stream: Schema.optional(Schema.Boolean),
  max_output_tokens: Schema.optional(Schema.Int),
  temperature: Schema.optional(Schema.Number),
  ...tunableFields
}, Forwarded)

const ResponseObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  created_at: Schema.Int,
  status: Schema.Literal("completed", "incomplete"),
  model: Schema.String,
  output: Schema.Array(Schema.Unknown),
  output_text: Schema.String,
  usage: Schema.Struct({ input_tokens: Schema.Int, output_tokens: Schema.Int, total_tokens: Schema.Int }),
  ...memoryFields
})

const MessagesRequest = Schema.Struct({
  messages: Schema.Array(Message),
  max_tokens: Schema.Int,
  system: Schema.optional(Content),
  model: Schema.optional(Schema.String),
  stream: Schema.optional(Schema.Boolean),
  temperature: Schema.optional(Schema.Number),
  ...tunableFields
}, Forwarded)

const MessageObject = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  content: Schema.Array(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })),
  model: Schema.String,
  stop_reason: Schema.Literal("end_turn", "max_tokens"),
  stop_sequence: Schema.Null,
  usage: Schema.Struct({ input_tokens: Schema.Int, output_tokens: Schema.Int }),
  ...memoryFields
})

const JsonRpcRequest = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  method: Schema.String.annotations({ description: "initialize, tools/list, tools/call, ..." }),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

const JsonRpcResponse = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.Union(Schema.String, Schema.Number, Schema.Null),
  result: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Struct({ code: Schema.Int, message: Schema.String }))
})

const ErrorEnvelope = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, request_id: Schema.String })
})

/** Shared definitions (`Int`, ...) the schemas below refer to; they join the document's components. */
const definitions: Record<string, JSONSchema.JsonSchema7> = {}

const json = (schema: Schema.Schema.Any) => ({
  "application/json": {
    schema: JSONSchema.fromAST(schema.ast, { definitions, definitionPath: "#/components/schemas/", target: "openApi3.1" })
  }
})

const TUNABLE_HEADERS: ReadonlyArray<readonly [name: string, type: "string" | "integer" | "boolean", description: string]> = [
  ["X-Svc-Space-Id", "string", "Memory space; the body's space_id wins. Default `default`."],
  ["X-Svc-User-Id", "string", "Scope: the end user."],
  ["X-Svc-Agent-Id", "string", "Scope: the agent."],
  ["X-Svc-Session-Id", "string", "Scope: the session."],
  ["X-Svc-Memory-Limit", "integer", "Memories recalled, 1 to 20 (default 5)."],
  ["X-Svc-Memory-Tokens", "integer", "Token budget of the memory block; whole memories are dropped, lowest-ranked first."],
  ["X-Svc-Auto-Record", "boolean", "false: the turn is not stored."],
  ["X-Svc-Memory", "boolean", "false: no recall for this call."]
]

const tunableHeaders = TUNABLE_HEADERS.map(([name, type, description]) => ({
  name,
  in: "header",
  required: false,
  description: `${description} Unparseable: 400 invalid_tunable.`,
  schema: { type }
}))

const failures = (statuses: ReadonlyArray<number>) =>
  Object.fromEntries(statuses.map((status) => [String(status), { description: "Error envelope", content: json(ErrorEnvelope) }]))

const proxyOperation = (summary: string, request: Schema.Schema.Any, answer: Schema.Schema.Any, security: ReadonlyArray<object>) => ({
  post: {
    tags: ["proxy"],
    summary,
    description: "Recalls memories into the system prompt, calls the model, stores the turn. `stream: true` answers " +
      "server-sent events in the format's own sequence. Memory tunables come from the body, then the X-Svc-* headers.",
    security,
    parameters: tunableHeaders,
    requestBody: { required: true, content: json(request) },
    responses: {
      "200": {
        description: "The answer, or `text/event-stream` when streamed",
        headers: {
          "X-Svc-Memories-Injected": { schema: { type: "integer" } },
          "X-Svc-Space-Id": { schema: { type: "string" } }
        },
        content: { ...json(answer), "text/event-stream": { schema: { type: "string" } } }
      },
      ...failures([400, 401, 403, 413, 422, 429, 503])
    }
  }
})

const bearer = { bearer: [] }

export const objectAt = (value: Record<string, unknown>, key: string): Record<string, unknown> => {
  const found = value[key]
  return typeof found === "object" && found !== null && !Array.isArray(found) ? { ...found } : {}
}

const WebhookOutcome = Schema.Struct({ received: Schema.Literal(true), outcome: Schema.String })

/** RFC 6749 §5.2, RFC 7591 §3.2.2: the OAuth endpoints' own error body (not the envelope). */
const OAuthErrorBody = Schema.Struct({ error: Schema.String, error_description: Schema.String })

const TokenAnswer = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  refresh_token: Schema.String,
  scope: Schema.String
})

const ClientRegistration = Schema.Struct({
  redirect_uris: Schema.Array(Schema.String),
  client_name: Schema.optional(Schema.String),
  token_endpoint_auth_method: Schema.optional(Schema.Literal("none")),
  grant_types: Schema.optional(Schema.Array(Schema.Literal("authorization_code", "refresh_token"))),
  response_types: Schema.optional(Schema.Array(Schema.Literal("code")))
})

const form = (fields: ReadonlyArray<string>) => ({
  "application/x-www-form-urlencoded": {
    schema: { type: "object", properties: Object.fromEntries(fields.map((name) => [name, { type: "string" }])) }
  }
})

const oauthFailure = { "400": { description: "RFC error (`invalid_grant`, `invalid_request`, ...)", content: json(OAuthErrorBody) } }

/** CORS preflight of an endpoint browser-based clients call from another origin. */
const preflight = {
  options: {
    tags: ["oauth"],
    summary: "CORS preflight (any origin)",
    responses: { "204": { description: "Access-Control-Allow-Origin *, Allow-Methods, Allow-Headers, Max-Age" } }
  }
}

const discoveryDocument = (summary: string) => ({
  get: {
    tags: ["oauth"],
    summary,
    responses: { "200": { description: "The metadata document", content: { "application/json": { schema: { type: "object" } } } } }
  },
  ...preflight
})

const TOKEN_FIELDS = ["grant_type", "code", "redirect_uri", "client_id", "code_verifier", "refresh_token", "resource", "scope"]

/** MCP authorization (docs/oauth.md): discovery, registration, the authorize pages, token and revocation. */
const oauthPaths = () => ({
  "/.well-known/oauth-protected-resource": discoveryDocument("Protected resource metadata of /mcp (RFC 9728)"),
  "/.well-known/oauth-authorization-server": discoveryDocument("Authorization server metadata (RFC 8414)"),
  "/oauth/register": {
    ...preflight,
    post: {
      tags: ["oauth"],
      summary: "Dynamic client registration (RFC 7591), public clients only",
      requestBody: { required: true, content: json(ClientRegistration) },
      responses: { "201": { description: "The registered client, with its client_id", content: json(ClientRegistration) }, ...oauthFailure }
    }
  },
  "/oauth/authorize": {
    get: {
      tags: ["oauth"],
      summary: "Authorization request: the sign-in page, then the consent page (HTML)",
      parameters: ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "resource", "scope", "state", "org_id"]
        .map((name) => ({ name, in: "query", required: false, schema: { type: "string" } })),
      responses: {
        "200": { description: "Sign-in or consent page", content: { "text/html": { schema: { type: "string" } } } },
        "302": { description: "Back to the redirect URI with `error=` (a refusal after the redirect URI was validated)" },
        "400": { description: "Error page (unknown client or redirect URI)", content: { "text/html": { schema: { type: "string" } } } }
      }
    },
    post: {
      tags: ["oauth"],
      summary: "The sign-in and consent forms",
      requestBody: { required: true, content: form(["action", "email", "password", "csrf_token", "org_id", "decision", "access", "spaces_mode", "space"]) },
      responses: {
        "302": { description: "Approved: `code` and `state` on the redirect URI; denied: `error=access_denied`" },
        "303": { description: "Signed in: back to the authorization request, with the session cookie" },
        "200": { description: "A page", content: { "text/html": { schema: { type: "string" } } } }
      }
    }
  },
  "/oauth/token": {
    ...preflight,
    post: {
      tags: ["oauth"],
      summary: "Token endpoint: authorization_code (PKCE S256) and refresh_token (rotating)",
      requestBody: { required: true, content: { ...form(TOKEN_FIELDS), ...json(Schema.Record({ key: Schema.String, value: Schema.String })) } },
      responses: { "200": { description: "Tokens (Cache-Control: no-store)", content: json(TokenAnswer) }, ...oauthFailure }
    }
  },
  "/oauth/revoke": {
    ...preflight,
    post: {
      tags: ["oauth"],
      summary: "Token revocation (RFC 7009); 200 for unknown tokens too",
      requestBody: { required: true, content: form(["token", "token_type_hint", "client_id"]) },
      responses: { "200": { description: "Revoked (or unknown)" }, ...oauthFailure }
    }
  }
})

/** The paths; rendering them fills `definitions`. */
const rawPaths = () => ({
  "/v1/chat/completions": proxyOperation("Chat completions through memory", ChatCompletionsRequest, ChatCompletion, [bearer]),
  "/v1/responses": proxyOperation("Responses through memory", ResponsesRequest, ResponseObject, [bearer]),
  "/v1/messages": proxyOperation("Messages through memory", MessagesRequest, MessageObject, [bearer, { apiKeyHeader: [] }]),
  "/mcp": {
    post: {
      tags: ["mcp"],
      summary: "Remote MCP endpoint (streamable HTTP, stateless, JSON answers)",
      description: "Tools: record, retrieve, list_spaces, reason, get_profile, get_user_profile, get_model. " +
        "The Accept header must list application/json and text/event-stream. A failing tool is a result with " +
        "isError true whose text is the error envelope. Also accepts OAuth access tokens (docs/oauth.md); a 401 " +
        "carries WWW-Authenticate with resource_metadata, a disallowed browser Origin gets 403.",
      security: [bearer],
      requestBody: { required: true, content: json(JsonRpcRequest) },
      responses: { "200": { description: "JSON-RPC answer", content: json(JsonRpcResponse) }, ...failures([400, 401, 403, 406, 413]) }
    }
  },
  "/v1/billing/webhook": {
    post: {
      tags: ["billing"],
      summary: "The payment processor's callback (Stripe webhook)",
      description: "No key or session: the Stripe-Signature header, verified with STRIPE_WEBHOOK_SECRET over the raw " +
        "body, is the credential. Each event id is applied once; a redelivery answers outcome `duplicate`. " +
        "Events used: checkout.session.completed, checkout.session.expired, customer.subscription.* ; others are " +
        "acknowledged with outcome `ignored`.",
      parameters: [{ name: "Stripe-Signature", in: "header", required: true, schema: { type: "string" } }],
      requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
      responses: {
        "200": { description: "Applied", content: json(WebhookOutcome) },
        ...failures([400, 503])
      }
    }
  },
  ...oauthPaths()
})

/** Adds the proxy's routes, `/mcp`, the OAuth routes and their security schemes to a generated document. */
export const withRawRoutes = (spec: Record<string, unknown>): Record<string, unknown> => {
  const paths = rawPaths()
  const components = objectAt(spec, "components")
  return {
    ...spec,
    paths: { ...objectAt(spec, "paths"), ...paths },
    components: {
      ...components,
      schemas: { ...definitions, ...objectAt(components, "schemas") },
      securitySchemes: {
        ...objectAt(components, "securitySchemes"),
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An API key (svc_live_…, svc_test_…) or a session token; on /mcp also an OAuth access token (mcp_at_…)"
        },
        apiKeyHeader: { type: "apiKey", in: "header", name: "x-api-key", description: "An API key (messages format only)" }
      }
    }
  }
}
