/**
 * Where this server is (its base URL, its `/mcp` resource), which browser
 * origins may call `/mcp`, and the discovery documents: RFC 9728 protected
 * resource metadata and RFC 8414 authorization server metadata.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Option } from "effect"
import { IncomingMessage } from "node:http"
import type { AppConfigShape } from "../config/AppConfig.ts"
import { SCOPES_SUPPORTED } from "../domain/OAuth.ts"

export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"
export const AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server"

const HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/

const first = (value: string | undefined) => value?.split(",")[0]?.trim().toLowerCase()

/** PUBLIC_URL when set; otherwise the scheme (X-Forwarded-Proto) and Host the request came with. */
export const baseUrl = (config: AppConfigShape, request: HttpServerRequest.HttpServerRequest) => {
  if (Option.isSome(config.publicUrl)) return config.publicUrl.value
  const proto = first(request.headers["x-forwarded-proto"]) === "https" ? "https" : "http"
  const host = request.headers["host"]?.trim()
  return `${proto}://${host !== undefined && HOST.test(host) ? host : `localhost:${config.port}`}`
}

export const resourceOf = (base: string) => `${base}/mcp`

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

export const isLoopbackHost = (hostname: string) => LOOPBACK_HOSTS.has(hostname.toLowerCase())

/**
 * Whether a browser at `origin` may call /mcp: loopback origins (any port),
 * PUBLIC_URL's origin and MCP_ALLOWED_ORIGINS. The Host header is not
 * trusted for this: under DNS rebinding it names the attacker's domain.
 */
export const originAllowed = (config: AppConfigShape, origin: string) => {
  if (!URL.canParse(origin)) return false
  const url = new URL(origin)
  if ((url.protocol === "http:" || url.protocol === "https:") && isLoopbackHost(url.hostname)) return true
  if (Option.isSome(config.publicUrl) && URL.canParse(config.publicUrl.value) && new URL(config.publicUrl.value).origin === url.origin) {
    return true
  }
  return (config.mcpAllowedOrigins ?? []).includes(url.origin)
}

const LOOPBACK_ADDRESS = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/

/** Whether the connection arrived on a loopback interface (where a rebound DNS name lands). */
export const arrivedOnLoopback = (request: HttpServerRequest.HttpServerRequest) => {
  const source: unknown = request.source
  if (!(source instanceof IncomingMessage)) return false
  return LOOPBACK_ADDRESS.test(source.socket.localAddress ?? "")
}

/**
 * Whether a request that reached a loopback address may name this Host:
 * loopback names (and 0.0.0.0), PUBLIC_URL's host and the hosts of MCP_ALLOWED_ORIGINS.
 * A foreign name there is a rebound DNS name (or an unconfigured proxy).
 */
export const hostAllowed = (config: AppConfigShape, host: string | undefined) => {
  if (host === undefined || !URL.canParse(`http://${host}`)) return false
  const url = new URL(`http://${host}`)
  // 0.0.0.0 is no name an attacker controls; browsers and tools use it for the local server.
  if (isLoopbackHost(url.hostname) || url.hostname === "0.0.0.0") return true
  const named = [...Option.toArray(config.publicUrl), ...(config.mcpAllowedOrigins ?? [])]
  return named.some((origin) => URL.canParse(origin) && new URL(origin).hostname === url.hostname)
}

export const resourceMetadataUrl = (base: string) => `${base}${PROTECTED_RESOURCE_PATH}`

/** RFC 9728. */
export const protectedResourceMetadata = (base: string) => ({
  resource: resourceOf(base),
  authorization_servers: [base],
  bearer_methods_supported: ["header"],
  scopes_supported: SCOPES_SUPPORTED,
  resource_name: "Engram memory (MCP)"
})

/** RFC 8414. */
export const authorizationServerMetadata = (base: string) => ({
  issuer: base,
  authorization_endpoint: `${base}/oauth/authorize`,
  token_endpoint: `${base}/oauth/token`,
  registration_endpoint: `${base}/oauth/register`,
  revocation_endpoint: `${base}/oauth/revoke`,
  response_types_supported: ["code"],
  response_modes_supported: ["query"],
  grant_types_supported: ["authorization_code", "refresh_token"],
  code_challenge_methods_supported: ["S256"],
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"],
  scopes_supported: SCOPES_SUPPORTED
})
