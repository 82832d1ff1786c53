import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { LoginRequest, SessionResponse, SignupRequest, SwitchRequest } from "./Accounts.ts"
import { Conflict, NotFound, SessionRequired, Unauthorized } from "./Errors.ts"
import { Authentication } from "./Principal.ts"

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("signup", "/auth/signup")
      .setPayload(SignupRequest)
      .addSuccess(SessionResponse, { status: 201 })
      .addError(Conflict)
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login")
      .setPayload(LoginRequest)
      .addSuccess(SessionResponse)
      .addError(Unauthorized)
  )
{}

export class LogoutApi extends HttpApiGroup.make("logout")
  .add(HttpApiEndpoint.post("logout", "/auth/logout").addSuccess(HttpApiSchema.NoContent).addError(SessionRequired))
  .middleware(Authentication)
{}

/**
 * Moves the calling session to another organization of the same user: a new
 * token acting there, expiring when the old one would have; the old one stops.
 */
export class SwitchApi extends HttpApiGroup.make("switch")
  .add(
    HttpApiEndpoint.post("switch", "/auth/switch")
      .setPayload(SwitchRequest)
      .addSuccess(SessionResponse)
      .addError(NotFound)
      .addError(SessionRequired)
      .addError(Unauthorized)
  )
  .middleware(Authentication)
{}
