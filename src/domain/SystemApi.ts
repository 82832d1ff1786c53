import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailable } from "./Errors.ts"
import { SpaceTypeList } from "./Spaces.ts"

export class SystemApi extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(Schema.Struct({ status: Schema.Literal("ok") })))
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Schema.Struct({ status: Schema.Literal("ready"), store: Schema.String, cache: Schema.String }))
      .addError(ServiceUnavailable)
  )
  .add(HttpApiEndpoint.get("spaceTypes", "/v1/space-types").addSuccess(SpaceTypeList))
{}
