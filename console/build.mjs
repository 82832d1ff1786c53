// esbuild's options for the web console's script (served at /console/app.js):
// one browser module, minified. scripts/build.mjs writes it into dist/ at
// install; services/ConsoleAssets.ts bundles an edited checkout's console in
// memory with the same options.
import { join } from "node:path"

/** @param {string} root the package's root */
export const consoleBuildOptions = (root) => ({
  entryPoints: [join(root, "console", "src", "main.ts")],
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "none",
  logLevel: "warning"
})
