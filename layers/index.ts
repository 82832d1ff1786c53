/**
 * `engram/layers`: Engram's layers, for a program that embeds a node in its
 * own Effect program. `Application` is the same everywhere; the profiles pick
 * the infrastructure (README, "Layers"):
 *
 * - `Main.Serve`: a whole node as `engram serve` runs it, the profile chosen by
 *   the environment (`AppConfig.layer` reads it);
 * - `Main.Runtime`: everything but HTTP; `Main.Http`: the API's server;
 * - `Embedded` and `Server`: the two profiles' infrastructure;
 * - `HttpLive`: the API's routes over an `HttpServer`.
 */
export { Application, Entities, Services } from "./Application.ts"
export * as Embedded from "./Embedded.ts"
export * as Main from "./Main.ts"
export * as Server from "./Server.ts"
export { AppConfig, fromEnv, type AppConfigShape } from "../src/config/AppConfig.ts"
export { HttpLive } from "../src/http/HttpLive.ts"
