/**
 * The contract as it is on the wire, for calls made with a plain HTTP client
 * (`fetch`, the console, Engram's own tests): which routes exist, what JSON
 * each takes and what it answers. Types only; derived from the HttpApi
 * definition through src/client/WireRoutes.ts (generated from it: the
 * encoded types of the schemas each route takes and answers), so renaming a route or a field
 * of the contract breaks every call that used the old one at type-check time.
 *
 *   const body: WireBody<"POST", "/v1/retrieve"> = { query: "...", space_id: "s" }
 *   const answer: WireAnswer<"POST", "/v1/retrieve"> = await (await fetch(...)).json()
 *
 * A path is matched segment by segment against the routes (":param" takes
 * any one segment; a query string is ignored), so template literals such as
 * `/v1/spaces/${id}/memories` resolve to their route.
 */
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import type { Brand, Option } from "effect"
import type { EngramApi } from "../domain/Api.ts"
import type { WireRoutes } from "./WireRoutes.ts"

export type { WireRoutes }

export type WireMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

type Groups = typeof EngramApi extends HttpApi.HttpApi<infer _Id, infer G, infer _E, infer _R> ? G : never

/** The HttpApi endpoint of a group and name. */
export type EndpointOf<Group extends string, Name extends string> = HttpApiEndpoint.HttpApiEndpoint.WithName<
  HttpApiGroup.HttpApiGroup.Endpoints<HttpApiGroup.HttpApiGroup.WithName<Groups, Group>>,
  Name
>

/** A decoded type as JSON carries it, for answers without a named schema: brands dropped, dates as strings, options as their value or null. */
export type Json<T> = T extends Brand.Brand<infer _K> ? (T extends string ? string : T extends number ? number : T)
  : T extends Date ? string
  : T extends Option.Option<infer A> ? Json<A> | null
  : T extends ReadonlyArray<infer A> ? ReadonlyArray<Json<A>>
  : T extends Uint8Array ? string
  : T extends object ? { readonly [K in keyof T]: Json<T[K]> }
  : T

type Split<S extends string> = S extends `${infer Head}/${infer Tail}` ? [Head, ...Split<Tail>] : [S]
type WithoutQuery<S extends string> = S extends `${infer Path}?${string}` ? Path : S

type SegmentsMatch<Route extends ReadonlyArray<string>, Actual extends ReadonlyArray<string>> = Route extends
  readonly [infer R extends string, ...infer RestR extends ReadonlyArray<string>]
  ? Actual extends readonly [infer A extends string, ...infer RestA extends ReadonlyArray<string>]
    ? R extends `:${string}` ? ([A] extends [""] ? false : SegmentsMatch<RestR, RestA>)
    : [A] extends [R] ? SegmentsMatch<RestR, RestA>
    : false
  : false
  : Actual extends readonly [] ? true
  : false

type RouteMatches<Key, Method extends string, Path extends string> = Key extends `${Method} ${infer Route}`
  ? SegmentsMatch<Split<Route>, Split<WithoutQuery<Path>>> extends true ? Key : never
  : never

/** The route key ("POST /v1/retrieve") a method and path resolve to; never when the contract has none. */
export type RouteOf<Method extends WireMethod, Path extends string> = {
  [K in keyof WireRoutes]: RouteMatches<K, Method, Path>
}[keyof WireRoutes]

/** The paths a method may be called with: any path resolving to one of its routes. */
export type WirePath<Method extends WireMethod, Path extends string> = [RouteOf<Method, Path>] extends [never]
  ? `no ${Method} route of the contract matches ${Path}`
  : Path

type RouteAt<Key> = Key extends keyof WireRoutes ? WireRoutes[Key] : never

type BodyAt<R> = R extends { readonly raw: true } ? unknown : R extends { readonly body: infer B } ? B : never

type AnswerAt<R> = R extends { readonly raw: true } ? unknown
  : R extends { readonly answer: infer A } ? A
  : R extends { readonly operation: readonly [infer G extends string, infer N extends string] }
    ? Json<HttpApiEndpoint.HttpApiEndpoint.Success<EndpointOf<G, N>>>
  : never

/** The JSON body a route takes, as encoded on the wire (never for routes without one; unknown for the raw routes). */
export type WireBody<Method extends WireMethod, Path extends string> = BodyAt<RouteAt<RouteOf<Method, Path>>>

/** The JSON a route answers with on success (void for 204; unknown for the raw routes). */
export type WireAnswer<Method extends WireMethod, Path extends string> = AnswerAt<RouteAt<RouteOf<Method, Path>>>
