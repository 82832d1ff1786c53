// `npm install` runs this first (the `prepare` script): the TypeScript sources
// bundled into dist/ with esbuild, so `engram` starts without compiling them
// through tsx (about 2 s and 100 MB less at every start; bench:footprint).
// effect and @effect/* are bundled (one file instead of a thousand modules);
// every other package stays in node_modules, where it finds its own files
// (PGlite's WASM, OCR and PDF data). bin/engram.mjs uses dist/ only while it
// is newer than every source file, so an edited checkout runs its sources.
import { build } from "esbuild"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { newestSource } from "../bin/sources.mjs"
import { consoleBuildOptions } from "../console/build.mjs"

const root = join(import.meta.dirname, "..")
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const bundled = (name) => name === "effect" || name.startsWith("@effect/")
// What @effect/platform-node and the cluster pull in from outside the effect family.
const alsoExternal = ["ws", "undici", "msgpackr", "find-my-way-ts", "multipasta", "@opentelemetry/*", "kubernetes-types", "pg-native"]

// fast-check is what effect's Schema reaches for when asked for arbitraries (property-based tests). Nothing the
// service runs asks, yet effect's static import of it loaded the whole package at every start, on the main thread
// and again in each worker (156 ms alone, measured). The bundle gets a module with fast-check's export names instead,
// each one refusing loudly if it is ever called; the test suite runs the sources, with the real package.
const withoutFastCheck = {
  name: "without-fast-check",
  setup(bundler) {
    bundler.onResolve({ filter: /^fast-check$/ }, () => ({ path: "fast-check", namespace: "without-fast-check" }))
    bundler.onLoad({ filter: /.*/, namespace: "without-fast-check" }, async () => {
      const names = Object.keys(await import("fast-check")).filter((name) => name !== "default" && /^[A-Za-z_$][\w$]*$/.test(name))
      const refusal = (name) => `export const ${name} = () => { throw new Error(${JSON.stringify(`fast-check's ${name} is not in engram's bundle: arbitraries are for the test suite`)}) }`
      return { contents: [...names.map(refusal), "export default {}"].join("\n"), loader: "js" }
    })
  }
}
const started = performance.now()
const dist = join(root, "dist")
rmSync(dist, { recursive: true, force: true })
try {
  await build({
    entryPoints: {
      engram: join(root, "src/cli/main.ts"),
      "parse-worker": join(root, "src/documents/ParseWorker.ts"),
      "extract-worker": join(root, "src/ingestion/ExtractionWorker.ts")
    },
    outdir: dist,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external: [...Object.keys(pkg.dependencies).filter((name) => !bundled(name)), ...alsoExternal],
    // Bundled CommonJS code calls require(); in an ES module it needs one made here.
    banner: { js: "import { createRequire as __engramRequire } from 'node:module'; const require = __engramRequire(import.meta.url);" },
    sourcemap: "linked",
    logLevel: "warning",
    plugins: [withoutFastCheck]
  })
  // The web console's script (served at /console/app.js).
  await build({ ...consoleBuildOptions(root), outfile: join(dist, "console", "app.js") })
  writeFileSync(join(dist, "build.json"), JSON.stringify({ newest_source_ms: newestSource(root) }))
  console.log(`engram build: dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`)
} catch (e) {
  // Without dist/ the service runs from its sources (slower to start); the install goes on.
  rmSync(dist, { recursive: true, force: true })
  console.warn(`engram build: no bundle, engram will run its sources through tsx: ${e instanceof Error ? e.message : String(e)}`)
}
