import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { LoginRequest, SessionResponse, SignupRequest } from "./Accounts.ts"
import { Conflict, SessionRequired, Unauthorized } from "./Errors.ts"
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
