/** The route table read back from the HttpApi, to tell an unknown path (404) from a wrong method (405). */
import { HttpApi } from "@effect/platform"
import { EngramApi } from "../domain/Api.ts"

interface Route {
  readonly method: string
  readonly pattern: RegExp
}

/** A route path (`/v1/spaces/:space_id`) as a pattern matching its concrete paths. */
export const compileRoute = (path: string) =>
  new RegExp(`^${path.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}/?$`)

const routes: Array<Route> = [
  { method: "GET", pattern: compileRoute("/openapi.json") },
  { method: "GET", pattern: compileRoute("/docs") }
]
HttpApi.reflect(EngramApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => void routes.push({ method: endpoint.method, pattern: compileRoute(endpoint.path) })
})

/** The methods served at a path; empty when the path is unknown. */
export const allowedMethods = (path: string): ReadonlyArray<string> => [
  ...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))
]

/** Routes served beside the HttpApi register here, so a wrong method on them is a 405 too. */
export const registerRoute = (method: string, path: string) => void routes.push({ method, pattern: compileRoute(path) })

const ownErrors: Array<string> = []

/**
 * Paths (by prefix) whose refusals are their protocol's own (OAuth's
 * `{error, error_description}`, an HTML page): the envelope leaves those
 * alone there; any other failure on them is still the envelope.
 */
export const registerOwnErrors = (prefix: string) => void ownErrors.push(prefix)

export const keepsOwnErrors = (path: string) => ownErrors.some((prefix) => path.startsWith(prefix))
