/**
 * MCP sign-in across three real `engram serve` processes behind one
 * PUBLIC_URL (as behind a load balancer): a code approved on one node is
 * exchanged on another, its access token works through every node, and a
 * refresh token's reuse or a revocation from the console stops the grant on
 * every node at once (tokens are checked against the shared store).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ClusterNode, clusterDatabase, clusterSkipReason, startCluster } from "../support/ClusterNodes.ts"
import { MemoryProvider, REDIRECT } from "../support/McpOAuthProvider.ts"
import { authorizeUrl, browse, codeOf, formPost, pkce, registerClient } from "../support/OAuthBrowser.ts"

/** The address users reach the cluster at; every node is told it, so every node names the same resource. */
const PUBLIC_URL = "http://memory.cluster.test"
const RESOURCE = `${PUBLIC_URL}/mcp`

const Signup = Schema.Struct({ session_token: Schema.String, org_id: Schema.String })
const Tokens = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.String,
  expires_in: Schema.Number,
  refresh_token: Schema.String,
  scope: Schema.String
})
const OAuthRefusal = Schema.Struct({ error: Schema.String, error_description: Schema.String })
const Grants = Schema.Struct({ items: Schema.Array(Schema.Struct({ id: Schema.String })) })
const ToolText = Schema.Struct({
  content: Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })),
  structuredContent: Schema.optional(Schema.Unknown)
})
const Recorded = Schema.Struct({ memories: Schema.Array(Schema.Struct({ memory_id: Schema.String })) })
const Retrieved = Schema.Struct({ results: Schema.Array(Schema.Struct({ memory_id: Schema.String, content: Schema.String })) })

const signupOn = async (node: ClusterNode, label: string) => {
  const email = `${label}-${Date.now()}@example.test`
  const password = "long password for oauth"
  const response = await fetch(`${node.url}/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password, org_name: label })
  })
  expect(response.status).toBe(201)
  const body = Schema.decodeUnknownSync(Signup)(await response.json())
  return { email, password, token: body.session_token, orgId: body.org_id }
}

/** Consent through `consentOn` (sign-in and consent pages over HTTP), the code exchanged on `exchangeOn`. */
const signInMcpClient = async (consentOn: ClusterNode, exchangeOn: ClusterNode, account: { email: string; password: string }) => {
  const clientId = await registerClient(consentOn.url, "Cluster Assistant")
  const { challenge, verifier } = pkce()
  const page = await browse(consentOn.url, authorizeUrl(consentOn.url, clientId, challenge, {}, PUBLIC_URL), account)
  expect(page.status, page.body).toBe(302)
  const { code } = codeOf(page.location)
  expect(code).toMatch(/^mcp_ac_/)
  const exchanged = await formPost(`${exchangeOn.url}/oauth/token`, {
    grant_type: "authorization_code",
    code: code!,
    redirect_uri: REDIRECT,
    client_id: clientId,
    code_verifier: verifier,
    resource: RESOURCE
  })
  expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200)
  return { clientId, tokens: Schema.decodeUnknownSync(Tokens)(exchanged.body) }
}

/** The official MCP SDK client on `node`'s /mcp, holding tokens already (no sign-in flow). */
const mcpClientOn = async (node: ClusterNode, clientId: string, tokens: typeof Tokens.Type) => {
  const provider = new MemoryProvider()
  provider.client = { client_id: clientId }
  provider.saved = tokens
  const client = new Client({ name: "engram-cluster-oauth-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", node.url), { authProvider: provider }))
  return client
}

const callTool = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = Schema.decodeUnknownSync(ToolText)(await client.callTool({ name, arguments: args }))
  // A tool that answers with memories fences its text for the model; programs read structuredContent.
  if (result.structuredContent !== undefined) return result.structuredContent
  const parsed: unknown = JSON.parse(result.content[0]?.text ?? "")
  return parsed
}

/** A raw tools/list on a node's /mcp with a bearer token: the HTTP status. */
const mcpStatus = async (node: ClusterNode, token: string) => {
  const response = await fetch(`${node.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })
  })
  await response.arrayBuffer()
  return response.status
}

describe.skipIf(clusterSkipReason !== undefined)("MCP sign-in across a cluster of three nodes", () => {
  let nodes: Array<ClusterNode> = []
  let drop = async () => {}

  beforeAll(async () => {
    const database = await clusterDatabase()
    drop = database.drop
    nodes = await startCluster(3, database.url, { PUBLIC_URL })
  }, 180_000)

  afterAll(async () => {
    for (const node of nodes) if (node.running()) await node.stop()
    await drop()
  }, 120_000)

  it("approved on A, exchanged on B, records on C and retrieves on A; a refresh on C and the old token's reuse on A end it everywhere", async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode]
    const account = await signupOn(a, "oauth-cluster")
    const { clientId, tokens } = await signInMcpClient(a, b, account)
    expect(tokens.access_token).toMatch(/^mcp_at_/)

    const spaceId = `oauth-cluster-${Date.now()}`
    const onC = await mcpClientOn(c, clientId, tokens)
    const onA = await mcpClientOn(a, clientId, tokens)
    try {
      const recorded = Schema.decodeUnknownSync(Recorded)(
        await callTool(onC, "record", { space_id: spaceId, content: "Wanjiru repairs vintage typewriters in Mombasa." })
      )
      const memoryId = recorded.memories[0]!.memory_id
      const found = Schema.decodeUnknownSync(Retrieved)(
        await callTool(onA, "retrieve", { space_id: spaceId, query: "Who repairs typewriters?" })
      )
      expect(found.results[0]?.memory_id).toBe(memoryId)
    } finally {
      await onC.close()
      await onA.close()
    }

    // Refreshed on C: the new access token works through every node.
    const refreshed = await formPost(`${c.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200)
    const next = Schema.decodeUnknownSync(Tokens)(refreshed.body)
    for (const node of nodes) expect(await mcpStatus(node, next.access_token), node.name).toBe(200)

    // The retired refresh token presented again on A: refused, and the whole grant is revoked on every node at once.
    const reused = await formPost(`${a.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
    expect(reused.status).toBe(400)
    expect(Schema.decodeUnknownSync(OAuthRefusal)(reused.body)).toEqual({
      error: "invalid_grant",
      error_description: "this refresh token was already used; the whole grant is revoked"
    })
    for (const node of nodes) {
      expect(await mcpStatus(node, next.access_token), node.name).toBe(401)
      expect(await mcpStatus(node, tokens.access_token), node.name).toBe(401)
    }
    const successor = await formPost(`${b.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: next.refresh_token, client_id: clientId })
    expect(Schema.decodeUnknownSync(OAuthRefusal)(successor.body).error_description).toBe(
      "the grant of this refresh token was revoked; sign in again"
    )
  }, 150_000)

  it("a grant revoked through DELETE /v1/oauth/grants on one node stops its token on the others at once", async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode]
    const account = await signupOn(b, "oauth-revoke-cluster")
    const { clientId, tokens } = await signInMcpClient(b, c, account)
    for (const node of nodes) expect(await mcpStatus(node, tokens.access_token), node.name).toBe(200)

    const listed = await fetch(`${c.url}/v1/oauth/grants`, { headers: { authorization: `Bearer ${account.token}` } })
    const grants = Schema.decodeUnknownSync(Grants)(await listed.json())
    expect(grants.items).toHaveLength(1)
    const deleted = await fetch(`${a.url}/v1/oauth/grants/${grants.items[0]!.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${account.token}` }
    })
    expect(deleted.status).toBe(204)
    // No waiting: the very next request on each other node is refused.
    expect(await mcpStatus(b, tokens.access_token)).toBe(401)
    expect(await mcpStatus(c, tokens.access_token)).toBe(401)
    expect(await mcpStatus(a, tokens.access_token)).toBe(401)
    const refreshed = await formPost(`${b.url}/oauth/token`, { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId })
    expect(Schema.decodeUnknownSync(OAuthRefusal)(refreshed.body)).toEqual({
      error: "invalid_grant",
      error_description: "the grant of this refresh token was revoked; sign in again"
    })
  }, 120_000)
})
