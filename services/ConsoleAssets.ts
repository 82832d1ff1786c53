/**
 * The web console's files (console/ at the package's root): its page, its
 * style sheet and its script. The script is bundled from console/src by
 * `npm install` (scripts/build.mjs, into dist/console/app.js); an edited
 * checkout whose sources are newer gets it bundled here, once, in memory.
 * Nothing is fetched from anywhere else.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { consoleBuildOptions } from "../console/build.mjs"

/** The package's root: this module sits one level below it, as source (services/) and bundled (dist/). */
const ROOT = join(import.meta.dirname, "..")
export const CONSOLE_DIR = join(ROOT, "console")
const BUNDLED = join(ROOT, "dist", "console", "app.js")

const newest = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
    const path = join(dir, entry.name)
    return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }, 0)

const bundleNow = Effect.tryPromise({
  try: async () => {
    const { build } = await import("esbuild")
    const result = await build({ ...consoleBuildOptions(ROOT), write: false })
    const output = result.outputFiles?.[0]
    if (output === undefined) throw new Error("esbuild wrote nothing")
    return output.text
  },
  catch: (cause) => new Error(`the console's script could not be bundled: ${String(cause)}`)
})

const script = Effect.suspend(() =>
  existsSync(BUNDLED) && statSync(BUNDLED).mtimeMs >= newest(join(CONSOLE_DIR, "src"))
    ? Effect.sync(() => readFileSync(BUNDLED, "utf8"))
    : bundleNow
)

export interface ConsoleFiles {
  readonly page: string
  readonly styles: string
  readonly script: string
}

/** The console's three files, read (and bundled when needed) on first use, then kept. */
export const consoleFiles: Effect.Effect<ConsoleFiles, Error> = Effect.cached(
  Effect.gen(function*() {
    const page = readFileSync(join(CONSOLE_DIR, "index.html"), "utf8")
    const styles = readFileSync(join(CONSOLE_DIR, "console.css"), "utf8")
    return { page, styles, script: yield* script }
  })
).pipe(Effect.runSync)
