import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Authentication } from "../domain/Principal.ts"
import { Authenticator } from "../identity/Authenticator.ts"

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(Authenticator, (authenticator) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      authenticator.authenticate({
        authorization: request.headers["authorization"],
        orgId: request.headers["x-svc-org-id"]
      })))
)
