import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { requireRole, requireSession } from "../domain/Principal.ts"
import { Projects } from "../spaces/Projects.ts"

/** Projects need a session; changing them needs owner or admin. */
export const ProjectHandlers = HttpApiBuilder.group(EngramApi, "projects", (handlers) =>
  Effect.map(Projects, (projects) => {
    const manager = requireSession.pipe(Effect.zipRight(requireRole("owner", "admin")))
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(requireSession, (p) => projects.list(p, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(requireSession, (p) => projects.get(p, path.project_id)))
      .handle("create", ({ payload }) => Effect.flatMap(manager, (p) => projects.create(p, payload.name)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(manager, (p) => projects.rename(p, path.project_id, payload.name)))
      .handle("delete", ({ path }) => Effect.flatMap(manager, (p) => projects.delete(p, path.project_id)))
  }))
