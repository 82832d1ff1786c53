/** The route table read back from the HttpApi, to tell an unknown path (404) from a wrong method (405). */
import { HttpApi } from "@effect/platform"
import { EngramApi } from "../domain/Api.ts"

interface Route {
  readonly method: string
  readonly pattern: RegExp
  /** The path as declared (`/v1/spaces/:space_id`). */
  readonly path: string
  /** Segments that are not parameters: among several matches, the most literal is the route. */
  readonly literal: number
}

const route = (method: string, path: string): Route => ({
  method,
  pattern: compileRoute(path),
  path,
  literal: path.split("/").filter((part) => part !== "" && !part.startsWith(":")).length
})

/** A route path (`/v1/spaces/:space_id`) as a pattern matching its concrete paths. */
export const compileRoute = (path: string) =>
  new RegExp(`^${path.split("/").map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}/?$`)

const routes: Array<Route> = [route("GET", "/openapi.json"), route("GET", "/docs")]
HttpApi.reflect(EngramApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => void routes.push(route(endpoint.method, endpoint.path))
})

/** The methods served at a path; empty when the path is unknown. */
export const allowedMethods = (path: string): ReadonlyArray<string> => [
  ...new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))
]

/** Routes served beside the HttpApi register here, so a wrong method on them is a 405 too. */
export const registerRoute = (method: string, path: string) => void routes.push(route(method, path))

/**
 * The declared path of the route serving `method` at `path` (what metrics
 * label a request with: one series per route, not per space or memory id);
 * "unmatched" for a path or method nothing serves.
 */
export const routeOf = (method: string, path: string): string => {
  let best: Route | undefined
  for (const candidate of routes) {
    if (candidate.method !== method || !candidate.pattern.test(path)) continue
    if (best === undefined || candidate.literal > best.literal) best = candidate
  }
  return best?.path ?? "unmatched"
}

const ownErrors: Array<string> = []

/**
 * Paths (by prefix) whose refusals are their protocol's own (OAuth's
 * `{error, error_description}`, an HTML page): the envelope leaves those
 * alone there; any other failure on them is still the envelope.
 */
export const registerOwnErrors = (prefix: string) => void ownErrors.push(prefix)

export const keepsOwnErrors = (path: string) => ownErrors.some((prefix) => path.startsWith(prefix))
