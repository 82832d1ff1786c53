/**
 * Projects group an organization's spaces. Anyone signed in to the
 * organization lists and reads them; owners and admins create, rename and
 * delete them. A project still holding spaces cannot be deleted.
 */
import { Clock, Effect, Option } from "effect"
import { Conflict, NotFound } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import { newId } from "../identity/Ids.ts"
import { ProjectRepo } from "../../services/store/ProjectRepo.ts"

const missing = (projectId: string) => new NotFound({ message: `project ${projectId} not found` })

export class Projects extends Effect.Service<Projects>()("engram/spaces/Projects", {
  dependencies: [ProjectRepo.Default],
  effect: Effect.gen(function*() {
    const repo = yield* ProjectRepo

    const get = Effect.fn("Projects.get")(function*(principal: PrincipalShape, projectId: string) {
      const project = yield* repo.find(principal.orgId, projectId)
      if (Option.isNone(project)) return yield* missing(projectId)
      return project.value
    })

    return {
      get,
      list: (principal: PrincipalShape, page: { limit: number; offset: number }) =>
        Effect.map(repo.list(principal.orgId, page), (result) => ({ ...result, limit: page.limit, offset: page.offset })),

      create: Effect.fn("Projects.create")(function*(principal: PrincipalShape, name: string) {
        const now = new Date(yield* Clock.currentTimeMillis)
        return yield* repo.create(principal.orgId, { projectId: newId("prj"), name: name.trim(), now })
      }),

      rename: Effect.fn("Projects.rename")(function*(principal: PrincipalShape, projectId: string, name: string) {
        const renamed = yield* repo.rename(principal.orgId, projectId, name.trim())
        if (Option.isNone(renamed)) return yield* missing(projectId)
        return renamed.value
      }),

      delete: Effect.fn("Projects.delete")(function*(principal: PrincipalShape, projectId: string) {
        const outcome = yield* repo.delete(principal.orgId, projectId)
        if (outcome === "missing") return yield* missing(projectId)
        if (outcome === "held") {
          return yield* new Conflict({ message: `project ${projectId} still holds spaces; delete or move them first` })
        }
      })
    }
  })
}) {}
