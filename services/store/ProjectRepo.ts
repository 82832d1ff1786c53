/** Projects of an organization, each with the number of spaces it holds. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Conflict } from "../../src/domain/Errors.ts"
import type { Project } from "../../src/domain/Projects.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { isForeignKeyViolation, isUniqueViolation, storeFailure } from "./SqlFailure.ts"

const ProjectRow = Schema.Struct({ project_id: Schema.String, name: Schema.String, created_at: Timestamptz, space_count: Int8 })
const decodeProjects = decodeRows(ProjectRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))

const toProject = (row: typeof ProjectRow.Type): Project => ({
  id: row.project_id,
  name: row.name,
  created_at: row.created_at.toISOString(),
  space_count: row.space_count
})

const nameTaken = (name: string) => new Conflict({ message: `a project named "${name}" already exists in this organization` })

export class ProjectRepo extends Effect.Service<ProjectRepo>()("engram/store/ProjectRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const withCount = (orgId: string) =>
      sql`SELECT p.project_id, p.name, p.created_at,
          (SELECT count(*) FROM spaces s WHERE s.org_id = p.org_id AND s.project_id = p.project_id) AS space_count
        FROM projects p WHERE p.org_id = ${orgId}`

    const find = (orgId: string, projectId: string) =>
      sql`SELECT * FROM (${withCount(orgId)}) p WHERE p.project_id = ${projectId}`.pipe(
        Effect.flatMap(decodeProjects),
        Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toProject))),
        storeFailure
      )

    return {
      find,

      create: (orgId: string, project: { projectId: string; name: string; now: Date }) =>
        sql`INSERT INTO projects (org_id, project_id, name, created_at)
          VALUES (${orgId}, ${project.projectId}, ${project.name}, ${project.now})`.pipe(
          Effect.as<Project>({ id: project.projectId, name: project.name, created_at: project.now.toISOString(), space_count: 0 }),
          Effect.catchIf(isUniqueViolation, () => nameTaken(project.name)),
          storeFailure,
          Effect.withSpan("ProjectRepo.create")
        ),

      list: (orgId: string, page: { limit: number; offset: number }) =>
        Effect.all({
          items: sql`${withCount(orgId)} ORDER BY p.created_at, p.project_id LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(
            Effect.flatMap(decodeProjects)
          ),
          total: sql`SELECT count(*) AS n FROM projects WHERE org_id = ${orgId}`.pipe(Effect.flatMap(decodeCount))
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items: items.map(toProject), total: total[0]?.n ?? 0 })),
          storeFailure
        ),

      /** Renames; none when the project does not exist. */
      rename: (orgId: string, projectId: string, name: string) =>
        sql`UPDATE projects SET name = ${name} WHERE org_id = ${orgId} AND project_id = ${projectId} RETURNING project_id`.pipe(
          Effect.flatMap(decodeRows(Schema.Struct({ project_id: Schema.String }))),
          Effect.catchIf(isUniqueViolation, () => nameTaken(name)),
          Effect.flatMap((rows) => rows.length === 0 ? Effect.succeed(Option.none<Project>()) : find(orgId, projectId)),
          storeFailure
        ),

      /** Deletes a project that holds no space (the spaces' foreign key refuses it otherwise, whatever races it). */
      delete: (orgId: string, projectId: string) =>
        sql`DELETE FROM projects WHERE org_id = ${orgId} AND project_id = ${projectId} RETURNING project_id`.pipe(
          Effect.flatMap(decodeRows(Schema.Struct({ project_id: Schema.String }))),
          Effect.map((rows): "deleted" | "held" | "missing" => rows.length > 0 ? "deleted" : "missing"),
          Effect.catchIf(isForeignKeyViolation, () => Effect.succeed<"held">("held")),
          storeFailure,
          Effect.withSpan("ProjectRepo.delete")
        )
    }
  })
}) {}
