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
  const common = {
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
  }
  // The node: code reached only through import() is a chunk of its own, with the packages it imports, which load
  // when it does. In one file, every package any code imports loaded at start: Stripe, the OpenTelemetry SDK,
  // ioredis and the MCP SDK, about 0.8 s and 60 MB (measured) for a node that uses none of them.
  await build({ ...common, entryPoints: { engram: join(root, "src/cli/main.ts") }, splitting: true })
  // Each worker in one file of its own: chunks shared with the node would carry every export the node uses from a
  // shared module (the extraction worker's code went from 0.86 MB to 1.47 MB), and a worker starts on the write path.
  await build({
    ...common,
    entryPoints: {
      "parse-worker": join(root, "src/documents/ParseWorker.ts"),
      "extract-worker": join(root, "src/ingestion/ExtractionWorker.ts"),
      "wake-worker": join(root, "src/retrieval/WakeWorker.ts")
    }
  })
  // The package's entry points (`engram/client`, `engram/testing`, `engram/layers`), for programs that import Engram:
  // every dependency stays in node_modules, effect too, so a program's own effect is the one these use. Beside the
  // workers, which the node they start finds next to its code. Their types: `npm run build` or `npm pack` (dist-types/).
  await build({
    ...common,
    external: [...Object.keys(pkg.dependencies), ...alsoExternal],
    plugins: [],
    entryPoints: {
      client: join(root, "src/client/index.ts"),
      testing: join(root, "src/testing/index.ts"),
      layers: join(root, "layers/index.ts")
    },
    splitting: true,
    chunkNames: "lib-[name]-[hash]"
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
