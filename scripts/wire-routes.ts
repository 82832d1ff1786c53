/**
 * Writes src/client/WireRoutes.ts: every route of the contract, as
 * "METHOD /path" -> the operation that serves it (its group and name in
 * src/domain/Api.ts), or "raw" for the routes served beside the HttpApi
 * (the proxy's formats, /mcp, OAuth). The types of src/client/Wire.ts read
 * payloads and answers through it, so a raw `fetch`-style call names a
 * route the contract has and sends the body it takes.
 *
 *   npm run gen:wire            (re)writes the file
 *   npm run gen:wire -- --check exits 1 when the file is out of date
 *
 * test/client/WireRoutes.test.ts fails when the file is out of date.
 */
import { writeFileSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderWireRoutes } from "../src/client/WireRoutesSource.ts"

const target = fileURLToPath(new URL("../src/client/WireRoutes.ts", import.meta.url))
const text = await renderWireRoutes()
if (process.argv.includes("--check")) {
  const current = readFileSync(target, "utf8")
  if (current !== text) {
    console.error("src/client/WireRoutes.ts is out of date: run npm run gen:wire")
    process.exit(1)
  }
  console.log("src/client/WireRoutes.ts is current")
} else {
  writeFileSync(target, text)
  console.log(`wrote ${target}`)
}
