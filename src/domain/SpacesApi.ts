import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, InsufficientRole, NotFound, SpaceLimitReached , SpaceUnavailable } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"
import { CreateSpaceRequest, Space, SpaceList, SpaceType } from "./Spaces.ts"
import { Page } from "./Strict.ts"

const SpacePath = Schema.Struct({ space_id: PathSegment })

/** The query of `GET /v1/spaces`: a page, optionally of one type or project. */
export const SpaceListQuery = Schema.Struct({
  ...Page(100, 1000).fields,
  space_type: Schema.optional(SpaceType),
  project_id: Schema.optional(PathSegment)
})

export class SpacesApi extends HttpApiGroup.make("spaces")
  .add(
    HttpApiEndpoint.get("list", "/v1/spaces")
      .setUrlParams(SpaceListQuery)
      .addSuccess(SpaceList)
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/spaces")
      .setPayload(CreateSpaceRequest)
      .addSuccess(Space, { status: 201 })
      .addError(Conflict)
      .addError(SpaceLimitReached)
  )
  .add(HttpApiEndpoint.get("get", "/v1/spaces/:space_id").setPath(SpacePath).addSuccess(Space))
  .add(
    HttpApiEndpoint.del("delete", "/v1/spaces/:space_id")
      .setPath(SpacePath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(InsufficientRole)
  )
  .addError(NotFound)
  .addError(Forbidden)
  .addError(SpaceUnavailable)
  .middleware(Authentication)
{}
