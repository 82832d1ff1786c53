/**
 * The web console at `/`: a page, a style sheet and a script, served by
 * Engram itself. The page signs in with the session accounts and then calls
 * the same API as agents do; nothing here bypasses it.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { consoleFiles } from "../../services/ConsoleAssets.ts"
import type { RawRoutes } from "./Routes.ts"

/** The page and its assets may only be framed, scripted and styled from this origin. */
const SECURITY = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
}

const serve = (pick: (files: { page: string; styles: string; script: string }) => string, contentType: string) =>
  consoleFiles.pipe(
    Effect.map((files) =>
      HttpServerResponse.text(pick(files), { contentType, headers: { ...SECURITY, "cache-control": "no-cache" } })),
    Effect.catchAll((error) =>
      Effect.logError("the web console could not be served", error.message).pipe(
        Effect.as(HttpServerResponse.unsafeJson(
          { error: { code: "internal_error", message: "the web console could not be served; the error was logged" } },
          { status: 500 }
        ))
      ))
  )

/** The console's page, script and style sheet, for the route table. */
export const CONSOLE_ROUTES: RawRoutes = { routes: [["GET", "/"], ["GET", "/console/app.js"], ["GET", "/console/console.css"]] }

export const ConsoleRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    yield* router.get("/", serve((f) => f.page, "text/html; charset=utf-8"))
    yield* router.get("/console/app.js", serve((f) => f.script, "text/javascript; charset=utf-8"))
    yield* router.get("/console/console.css", serve((f) => f.styles, "text/css; charset=utf-8"))
  })
)
