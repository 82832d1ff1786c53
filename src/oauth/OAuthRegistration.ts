/**
 * RFC 7591 dynamic client registration, for public clients only
 * (`token_endpoint_auth_method` `none`, PKCE instead of a secret), and the
 * redirect URI rules: https, or http on loopback; matched exactly, except
 * that a loopback redirect matches on any port (RFC 8252 §7.3).
 */
import { Clock, Effect, Schema } from "effect"
import { oauthError, RegistrationRequest, SCOPES_SUPPORTED } from "../domain/OAuth.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { OAuthRepo } from "../../services/store/OAuthRepo.ts"
import { isLoopbackHost } from "./OAuthMetadata.ts"

const MAX_REDIRECT_URIS = 10
const MAX_NAME = 200

/** An acceptable redirect URI: absolute, no fragment, https or loopback http. */
export const redirectUriAcceptable = (uri: string) => {
  if (uri.length > 2000 || !URL.canParse(uri)) return false
  const url = new URL(uri)
  if (url.hash !== "" || uri.includes("#") || url.username !== "" || url.password !== "") return false
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname))
}

/** Exact match, except a loopback http redirect, which matches on any port. */
export const redirectMatches = (registered: string, requested: string) => {
  if (registered === requested) return true
  if (!URL.canParse(registered) || !URL.canParse(requested)) return false
  const a = new URL(registered)
  const b = new URL(requested)
  if (a.protocol !== "http:" || b.protocol !== "http:" || !isLoopbackHost(a.hostname)) return false
  return a.hostname === b.hostname && a.pathname === b.pathname && a.search === b.search && b.hash === ""
}

const strings = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined

export class OAuthRegistration extends Effect.Service<OAuthRegistration>()("engram/oauth/OAuthRegistration", {
  dependencies: [OAuthRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* OAuthRepo

    const register = Effect.fn("OAuthRegistration.register")(function*(body: unknown) {
      const request = yield* Schema.decodeUnknown(RegistrationRequest)(body).pipe(
        Effect.mapError(() => oauthError("invalid_client_metadata", "the registration must be a JSON object"))
      )
      const redirectUris = strings(request.redirect_uris)
      if (redirectUris === undefined || redirectUris.length === 0 || redirectUris.length > MAX_REDIRECT_URIS) {
        return yield* oauthError("invalid_redirect_uri", `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs`)
      }
      if (!redirectUris.every(redirectUriAcceptable)) {
        return yield* oauthError(
          "invalid_redirect_uri",
          "each redirect URI must be an absolute https URI, or http on localhost, 127.0.0.1 or [::1], without a fragment"
        )
      }
      const method = request.token_endpoint_auth_method ?? "none"
      if (method !== "none") {
        return yield* oauthError("invalid_client_metadata", "only public clients are supported: token_endpoint_auth_method must be none")
      }
      const grantTypes = request.grant_types === undefined ? ["authorization_code", "refresh_token"] : strings(request.grant_types)
      if (grantTypes === undefined || !grantTypes.every((g) => g === "authorization_code" || g === "refresh_token")) {
        return yield* oauthError("invalid_client_metadata", "grant_types may list authorization_code and refresh_token")
      }
      const responseTypes = request.response_types === undefined ? ["code"] : strings(request.response_types)
      if (responseTypes === undefined || !responseTypes.every((r) => r === "code")) {
        return yield* oauthError("invalid_client_metadata", "response_types may only list code")
      }
      if (request.client_name !== undefined && (typeof request.client_name !== "string" || request.client_name.length > MAX_NAME)) {
        return yield* oauthError("invalid_client_metadata", `client_name must be a string of at most ${MAX_NAME} characters`)
      }
      if (request.scope !== undefined && typeof request.scope !== "string") {
        return yield* oauthError("invalid_client_metadata", "scope must be a space-separated string")
      }
      const clientName = typeof request.client_name === "string" && request.client_name.trim() !== "" ? request.client_name.trim() : null
      const now = new Date(yield* Clock.currentTimeMillis)
      const clientId = `mcpc_${randomBase62(24)}`
      yield* repo.createClient({ id: clientId, clientName, redirectUris, now })
      return {
        client_id: clientId,
        client_id_issued_at: Math.floor(now.getTime() / 1000),
        ...(clientName === null ? {} : { client_name: clientName }),
        redirect_uris: redirectUris,
        grant_types: grantTypes,
        response_types: responseTypes,
        token_endpoint_auth_method: "none",
        scope: SCOPES_SUPPORTED.join(" ")
      }
    })

    return { register, findClient: repo.findClient }
  })
}) {}
