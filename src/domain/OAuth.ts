/**
 * MCP authorization (OAuth 2.1) on the wire: the scopes, the shapes of the
 * registration and token requests, and the RFC error (`{error,
 * error_description}`), which these endpoints answer instead of the envelope.
 */
import { Schema } from "effect"

export const SCOPE_READ = "memories:read"
export const SCOPE_WRITE = "memories:write"
export const SCOPES_SUPPORTED = [SCOPE_READ, SCOPE_WRITE] as const

/** Access tokens live an hour, refresh tokens 30 days (each use replaces it), codes a minute. */
export const ACCESS_TOKEN_SECONDS = 3600
export const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600
export const CODE_SECONDS = 60

/** Opaque bearer secrets, recognisable by prefix. */
export const ACCESS_TOKEN_PREFIX = "mcp_at_"
export const REFRESH_TOKEN_PREFIX = "mcp_rt_"
export const CODE_PREFIX = "mcp_ac_"

/** An RFC 6749 / 7591 / 7009 error: `error` is the RFC's code. */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  error: Schema.String,
  description: Schema.String,
  status: Schema.Number
}) {}

export const oauthError = (error: string, description: string, status = 400) => new OAuthError({ error, description, status })

/** RFC 7591 client metadata; fields not listed are ignored. */
export const RegistrationRequest = Schema.Struct({
  redirect_uris: Schema.optional(Schema.Unknown),
  client_name: Schema.optional(Schema.Unknown),
  token_endpoint_auth_method: Schema.optional(Schema.Unknown),
  grant_types: Schema.optional(Schema.Unknown),
  response_types: Schema.optional(Schema.Unknown),
  scope: Schema.optional(Schema.Unknown)
})

const Text = Schema.optional(Schema.String)

/** The token endpoint's parameters (form-encoded or JSON). */
export const TokenRequest = Schema.Struct({
  grant_type: Text,
  code: Text,
  redirect_uri: Text,
  client_id: Text,
  code_verifier: Text,
  refresh_token: Text,
  resource: Text,
  scope: Text
})
export type TokenRequest = typeof TokenRequest.Type

/** The revocation endpoint's parameters. */
export const RevocationRequest = Schema.Struct({ token: Text, token_type_hint: Text, client_id: Text })

/** The authorization request (query string, or the hidden fields of the sign-in and consent forms). */
export const AuthorizationRequest = Schema.Struct({
  client_id: Text,
  redirect_uri: Text,
  response_type: Text,
  code_challenge: Text,
  code_challenge_method: Text,
  resource: Text,
  scope: Text,
  state: Text
})
export type AuthorizationRequest = typeof AuthorizationRequest.Type

export const AUTHORIZATION_PARAMS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "code_challenge",
  "code_challenge_method",
  "resource",
  "scope",
  "state"
] as const
