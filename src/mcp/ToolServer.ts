/**
 * One MCP server per HTTP request (stateless streamable HTTP, JSON answers):
 * the tools are bound to the caller's Principal, so nothing outlives the
 * request and no request sees another's credentials.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import type { PrincipalShape } from "../domain/Principal.ts"
import type { McpTools } from "./McpTools.ts"
import { runTool, type ToolRunner } from "./ToolResult.ts"
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

export const makeToolServer = (tools: McpTools, principal: PrincipalShape, runner: ToolRunner) => {
  const server = new McpServer({ name: "engram", version: "0.1.0" }, { instructions: INSTRUCTIONS })
  const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const

  server.registerTool("record", {
    title: "Record a memory",
    description: "Store text in a memory space. Durable facts are extracted from it and stored; the stored memories " +
      "are returned (none when the text holds no information, such as 'ok').",
    inputSchema: RecordArgs,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
  }, (args, extra) => runTool(runner, tools.record(principal, args), extra.signal))

  server.registerTool("retrieve", {
    title: "Retrieve memories",
    description: "Rank a space's memories against a natural-language query (semantic and keyword). Returns results " +
      "(memory_id, content, relevance_score, memory_type, entities, occurred_start, occurred_end, metadata, created_at).",
    inputSchema: RetrieveArgs,
    annotations: readOnly
  }, (args, extra) => runTool(runner, tools.retrieve(principal, args), extra.signal))

  server.registerTool("list_spaces", {
    title: "List memory spaces",
    description: "The memory spaces of your organization, oldest first: {items, total, limit, offset}.",
    inputSchema: ListSpacesArgs,
    annotations: readOnly
  }, (args, extra) => runTool(runner, tools.listSpaces(principal, args), extra.signal))

  server.registerTool("get_model", {
    title: "Describe a model",
    description: "The catalog entry of a model this deployment serves (id, short_name, alias, default, credit rates, " +
      "requests_per_minute). Without a name, the default model.",
    inputSchema: GetModelArgs,
    annotations: readOnly
  }, (args, extra) => runTool(runner, tools.getModel(args), extra.signal))

  server.registerTool("reason", {
    title: "Reason over a space",
    description: "Answer a question by synthesis across the space's memories, by a catalog model, under the space's " +
      "profile. Returns {insights, model, usage}.",
    inputSchema: ReasonArgs,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false }
  }, (args, extra) => runTool(runner, tools.reason(principal, args), extra.signal))

  server.registerTool("get_profile", {
    title: "Get the space profile",
    description: "The space's mission and disposition (skepticism, literalism, empathy, 1 to 5), which shape reason's answers.",
    inputSchema: GetProfileArgs,
    annotations: readOnly
  }, (args, extra) => runTool(runner, tools.getProfile(principal, args), extra.signal))

  server.registerTool("get_user_profile", {
    title: "Get a user's profile",
    description: "What the space holds about one user_id (only memories written under it): memory_count, first_seen, " +
      "last_active and a page of memories. An unknown user is an empty profile; an unknown space is space_not_found.",
    inputSchema: GetUserProfileArgs,
    annotations: readOnly
  }, (args, extra) => runTool(runner, tools.getUserProfile(principal, args), extra.signal))

  return server
}

/** Answers one HTTP request with a fresh server and transport, and closes both (aborting tool calls) when done or cancelled. */
export const serveOnce = async (server: McpServer, request: Request, signal: AbortSignal): Promise<Response> => {
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
