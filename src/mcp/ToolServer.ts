/**
 * One MCP server per HTTP request (stateless streamable HTTP, JSON answers):
 * the tools are bound to the caller's Principal, so nothing outlives the
 * request and no request sees another's credentials. Tool calls are
 * dispatched here rather than by the SDK's McpServer, so that every refusal
 * (an unknown tool, arguments the advertised schema refuses) is a tool result
 * in the API's error envelope, like every other failure.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema, type ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import * as z from "zod"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { McpTools } from "./McpTools.ts"
import { type ToolLimits, UNLIMITED } from "./ToolLimits.ts"
import { argumentFailure, forbiddenCall, runTool, type ToolRunner, unknownTool } from "./ToolResult.ts"
import {
  GetModelArgs,
  GetProfileArgs,
  GetUserProfileArgs,
  ListSpacesArgs,
  ReasonArgs,
  RecordArgs,
  RetrieveArgs
} from "./ToolSchemas.ts"

const INSTRUCTIONS = "Engram is long-term memory. Write what is worth keeping with record; recall it with " +
  "retrieve (ranked memories) or reason (a synthesized answer) in the same space_id. user_id, agent_id and " +
  "session_id partition a space: a scoped retrieve only sees memories written under the same scope. " +
  "Failures come back as a tool error whose text is {\"error\":{\"code\",\"message\",\"request_id\"}}."

interface ToolSpec<S extends z.ZodType> {
  readonly title: string
  readonly description: string
  readonly inputSchema: S
  readonly annotations: ToolAnnotations
  readonly run: (args: z.output<S>) => Effect.Effect<unknown, unknown>
  /** The answer holds stored memories: shown to the model fenced as data. */
  readonly recalled?: boolean
}

/** A tool with its arguments' type put away: how it is listed, and a call that checks the arguments, then runs. */
interface Tool {
  readonly listing: {
    readonly name: string
    readonly title: string
    readonly description: string
    readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown }
    readonly annotations: ToolAnnotations
  }
  readonly call: (args: unknown, signal: AbortSignal) => Promise<CallToolResult>
}

const defineTool = <S extends z.ZodType>(name: string, spec: ToolSpec<S>, runner: ToolRunner): Tool => ({
  listing: {
    name,
    title: spec.title,
    description: spec.description,
    inputSchema: { ...z.toJSONSchema(spec.inputSchema, { target: "draft-7", io: "input" }), type: "object" },
    annotations: spec.annotations
  },
  call: (args, signal) => {
    const parsed = spec.inputSchema.safeParse(args ?? {})
    return parsed.success
      ? runTool(runner, spec.run(parsed.data), signal, spec.recalled === true)
      : Promise.resolve(argumentFailure(runner.requestId, parsed.error.issues, args))
  }
})

const WRITE_TOOLS = new Set(["record"])

/** Why the credential may not make this call, if it may not. */
const refusal = (limits: ToolLimits, name: string, args: unknown): string | undefined => {
  if (!limits.canWrite && WRITE_TOOLS.has(name)) return `${name} needs the memories:write scope; this token may only read`
  const spaceId = typeof args === "object" && args !== null ? Reflect.get(args, "space_id") : undefined
  if (limits.spaces !== null && typeof spaceId === "string" && !limits.spaces.includes(spaceId)) {
    return "this token was not granted access to that space"
  }
  return undefined
}

const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const

/** A grant limited to some spaces lists only those. */
const withinGrant = <A extends { readonly items: ReadonlyArray<{ readonly space_id: string }>; readonly total: number }>(
  limits: ToolLimits,
  page: A
): A => {
  const allowed = limits.spaces
  if (allowed === null) return page
  const items = page.items.filter((space) => allowed.includes(space.space_id))
  return { ...page, items, total: items.length }
}

const toolsOf = (tools: McpTools, principal: PrincipalShape, runner: ToolRunner, limits: ToolLimits): ReadonlyArray<Tool> => [
  defineTool("record", {
    title: "Record a memory",
    description: "Store text in a memory space. Durable facts are extracted from it and stored; the stored memories " +
      "are returned (none when the text holds no information, such as 'ok').",
    inputSchema: RecordArgs,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (args) => tools.record(principal, args)
  }, runner),
  defineTool("retrieve", {
    title: "Retrieve memories",
    description: "Rank a space's memories against a natural-language query (semantic and keyword). Returns results " +
      "(memory_id, content, relevance_score, memory_type, entities, occurred_start, occurred_end, metadata, created_at).",
    inputSchema: RetrieveArgs,
    annotations: readOnly,
    run: (args) => tools.retrieve(principal, args),
    recalled: true
  }, runner),
  defineTool("list_spaces", {
    title: "List memory spaces",
    description: "The memory spaces of your organization, oldest first: {items, total, limit, offset}.",
    inputSchema: ListSpacesArgs,
    annotations: readOnly,
    run: (args) => Effect.map(tools.listSpaces(principal, args), (page) => withinGrant(limits, page))
  }, runner),
  defineTool("get_model", {
    title: "Describe a model",
    description: "With space_id and model_id: the space's memory model, a standing question it keeps answering " +
      "(name, query, content in markdown, last_refreshed_at, is_stale). Otherwise the catalog entry of a model this " +
      "deployment serves (id, short_name, alias, default, credit rates, requests_per_minute); without a name, the default model.",
    inputSchema: GetModelArgs,
    annotations: readOnly,
    run: (args) => tools.getModel(principal, args),
    recalled: true
  }, runner),
  defineTool("reason", {
    title: "Reason over a space",
    description: "Answer a question by synthesis across the space's memories, by a catalog model, under the space's " +
      "profile. Returns {insights, model, usage}.",
    inputSchema: ReasonArgs,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    run: (args) => tools.reason(principal, args)
  }, runner),
  defineTool("get_profile", {
    title: "Get the space profile",
    description: "The space's mission and disposition (skepticism, literalism, empathy, 1 to 5), which shape reason's answers.",
    inputSchema: GetProfileArgs,
    annotations: readOnly,
    run: (args) => tools.getProfile(principal, args)
  }, runner),
  defineTool("get_user_profile", {
    title: "Get a user's profile",
    description: "What the space holds about one user_id (only memories written under it): memory_count, first_seen, " +
      "last_active and a page of memories. An unknown user is an empty profile; an unknown space is space_not_found.",
    inputSchema: GetUserProfileArgs,
    annotations: readOnly,
    run: (args) => tools.getUserProfile(principal, args),
    recalled: true
  }, runner)
]

export const makeToolServer = (tools: McpTools, principal: PrincipalShape, runner: ToolRunner, limits: ToolLimits = UNLIMITED) => {
  const server = new Server({ name: "engram", version: "0.1.0" }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const table = toolsOf(tools, principal, runner, limits)
  const byName = new Map(table.map((tool) => [tool.listing.name, tool]))
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: table.map((tool) => tool.listing) }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const tool = byName.get(request.params.name)
    if (tool === undefined) return unknownTool(runner.requestId, request.params.name, [...byName.keys()])
    const refused = refusal(limits, request.params.name, request.params.arguments)
    return refused === undefined ? tool.call(request.params.arguments, extra.signal) : forbiddenCall(runner.requestId, refused)
  })
  return server
}

/** Answers one HTTP request with a fresh server and transport, and closes both (aborting tool calls) when done or cancelled. */
export const serveOnce = async (server: Server, request: Request, signal: AbortSignal): Promise<Response> => {
  // No sessionIdGenerator: stateless, no Mcp-Session-Id.
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true })
  const close = () => void server.close().catch(() => {})
  signal.addEventListener("abort", close, { once: true })
  try {
    await server.connect(transport)
    return await transport.handleRequest(request)
  } finally {
    signal.removeEventListener("abort", close)
    close()
  }
}
