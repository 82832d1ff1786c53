/**
 * The route table: every route the node serves (the HttpApi's, read back
 * from its definition, and those served beside it, each declared by the
 * module that serves them), to tell an unknown path (404) from a wrong
 * method (405), to label metrics by route, and to know which paths keep
 * their protocol's own refusals or read their own bodies. Built once per
 * server from declarations: nothing registers into it at run time.
 */
import { HttpApi } from "@effect/platform"
import { Context, Layer } from "effect"
import { EngramApi } from "../domain/Api.ts"

/** What a module serving routes beside the HttpApi declares about them. */
export interface RawRoutes {
  /** Its routes, so a wrong method on them is a 405 and metrics name them. */
  readonly routes: ReadonlyArray<readonly [method: string, path: string]>
  /** Path prefixes whose refusals are their protocol's own (OAuth's `{error, error_description}`, an HTML page). */
  readonly ownErrors?: ReadonlyArray<string>
  /** Routes that read their own body (a multipart upload, a streamed import): the JSON guard leaves them alone. */
  readonly ownBodies?: ReadonlyArray<readonly [method: string, path: string]>
}

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

/** The HttpApi's routes, with the OpenAPI document and its reference page. */
const apiRoutes = (): ReadonlyArray<Route> => {
  const routes: Array<Route> = [route("GET", "/openapi.json"), route("GET", "/docs")]
  HttpApi.reflect(EngramApi, { onGroup: () => {}, onEndpoint: ({ endpoint }) => void routes.push(route(endpoint.method, endpoint.path)) })
  return routes
}

export interface RouteTableService {
  /** The methods served at a path; empty when the path is unknown. */
  readonly allowedMethods: (path: string) => ReadonlyArray<string>
  /** The declared path of the route serving `method` at `path` (one metrics series per route); "unmatched" when nothing serves it. */
  readonly routeOf: (method: string, path: string) => string
  /** Whether the path's refusals are its protocol's own, which the envelope leaves alone. */
  readonly keepsOwnErrors: (path: string) => boolean
  /** Whether the route reads its own body. */
  readonly readsOwnBody: (method: string, path: string) => boolean
}

export class RouteTable extends Context.Tag("engram/http/RouteTable")<RouteTable, RouteTableService>() {
  /** The table of the HttpApi's routes and the declared `raw` ones. */
  static make(raw: ReadonlyArray<RawRoutes>): RouteTableService {
    const routes = [...apiRoutes(), ...raw.flatMap((r) => r.routes.map(([method, path]) => route(method, path)))]
    const ownErrors = raw.flatMap((r) => r.ownErrors ?? [])
    const ownBodies = raw.flatMap((r) => (r.ownBodies ?? []).map(([method, path]) => route(method, path)))
    return {
      allowedMethods: (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))],
      routeOf: (method, path) => {
        let best: Route | undefined
        for (const candidate of routes) {
          if (candidate.method !== method || !candidate.pattern.test(path)) continue
          if (best === undefined || candidate.literal > best.literal) best = candidate
        }
        return best?.path ?? "unmatched"
      },
      keepsOwnErrors: (path) => ownErrors.some((prefix) => path.startsWith(prefix)),
      readsOwnBody: (method, path) => ownBodies.some((r) => r.method === method && r.pattern.test(path))
    }
  }

  static layer(raw: ReadonlyArray<RawRoutes>) {
    return Layer.sync(RouteTable, () => RouteTable.make(raw))
  }
}
