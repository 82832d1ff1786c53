/**
 * Browser-based MCP clients call discovery, registration, token and
 * revocation from their own origin. These endpoints take no cookie (a public
 * client proves itself with PKCE, and a token is good only to its holder), so
 * any origin may call them; the authorize pages and /mcp keep their own rules.
 */
import { HttpServerResponse } from "@effect/platform"
import { AUTHORIZATION_SERVER_PATH, PROTECTED_RESOURCE_PATH } from "../oauth/OAuthMetadata.ts"

/** On every answer of those endpoints, refusals included. */
export const CORS = { "access-control-allow-origin": "*" }

/** The endpoints browsers may call from another origin, and the methods each serves. */
export const CROSS_ORIGIN = [
  [PROTECTED_RESOURCE_PATH, "GET, OPTIONS"],
  [`${PROTECTED_RESOURCE_PATH}/mcp`, "GET, OPTIONS"],
  [AUTHORIZATION_SERVER_PATH, "GET, OPTIONS"],
  ["/oauth/register", "POST, OPTIONS"],
  ["/oauth/token", "POST, OPTIONS"],
  ["/oauth/revoke", "POST, OPTIONS"]
] as const

/** The answer to a preflight: the methods, the headers MCP clients send, cached for a day. */
export const preflight = (methods: string) =>
  HttpServerResponse.empty({
    status: 204,
    headers: {
      ...CORS,
      "access-control-allow-methods": methods,
      "access-control-allow-headers": "Authorization, Content-Type, MCP-Protocol-Version",
      "access-control-max-age": "86400"
    }
  })
