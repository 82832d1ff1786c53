import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ApiKey, CreateApiKeyRequest, CreatedApiKey } from "./ApiKeys.ts"
import { InsufficientRole, NotFound, SessionRequired } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(HttpApiEndpoint.get("list", "/v1/api-keys").addSuccess(Schema.Array(ApiKey)))
  .add(
    HttpApiEndpoint.post("create", "/v1/api-keys")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreatedApiKey, { status: 201 })
      .addError(InsufficientRole)
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/api-keys/:id")
      .setPath(Schema.Struct({ id: PathSegment }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(InsufficientRole)
      .addError(NotFound)
  )
  .addError(SessionRequired)
  .middleware(Authentication)
{}
