import { HttpServerRequest } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Authentication } from "../domain/Principal.ts"
import { Authenticator } from "../identity/Authenticator.ts"
import { Metering } from "../metering/Metering.ts"

/** Every authenticated request is also counted against its organization's rate limit. */
export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const metering = yield* Metering
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      authenticator.authenticate({
        authorization: request.headers["authorization"],
        orgId: request.headers["x-svc-org-id"]
      }).pipe(Effect.tap((principal) => metering.admit(principal))))
  })
)
