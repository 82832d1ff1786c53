/** Projects: named groups of an organization's spaces (control plane, session only). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, InsufficientRole, NotFound, SessionRequired } from "./Errors.ts"
import { Authentication } from "./Principal.ts"
import { PathSegment } from "./SafeText.ts"
import { Page, Paged, strict, Text } from "./Strict.ts"

export const Project = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: Schema.String,
  space_count: Schema.Number
})
export type Project = typeof Project.Type

export const ProjectList = Paged(Project)

/** 1-100 characters, not blank; unique in the organization. */
export const ProjectName = Text(100)

export const CreateProjectRequest = strict(Schema.Struct({ name: ProjectName }))
export const UpdateProjectRequest = strict(Schema.Struct({ name: ProjectName }))

const ProjectPath = Schema.Struct({ project_id: PathSegment })

export class ProjectsApi extends HttpApiGroup.make("projects")
  .add(HttpApiEndpoint.get("list", "/v1/projects").setUrlParams(Page(100, 1000)).addSuccess(ProjectList))
  .add(
    HttpApiEndpoint.post("create", "/v1/projects")
      .setPayload(CreateProjectRequest)
      .addSuccess(Project, { status: 201 })
      .addError(Conflict)
      .addError(InsufficientRole)
  )
  .add(HttpApiEndpoint.get("get", "/v1/projects/:project_id").setPath(ProjectPath).addSuccess(Project))
  .add(
    HttpApiEndpoint.patch("update", "/v1/projects/:project_id")
      .setPath(ProjectPath)
      .setPayload(UpdateProjectRequest)
      .addSuccess(Project)
      .addError(Conflict)
      .addError(InsufficientRole)
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/projects/:project_id")
      .setPath(ProjectPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Conflict)
      .addError(InsufficientRole)
  )
  .addError(NotFound)
  .addError(SessionRequired)
  .middleware(Authentication)
{}
