#!/usr/bin/env node
// Runs the bundle `npm install` built (dist/, scripts/build.mjs) while it is
// newer than every source; otherwise the TypeScript sources directly, through tsx.
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { newestSource } from "./sources.mjs"

const root = join(import.meta.dirname, "..")
const stamp = join(root, "dist", "build.json")

const built = () => {
  if (process.env.ENGRAM_FROM_SOURCES === "1" || !existsSync(stamp)) return false
  try {
    return JSON.parse(readFileSync(stamp, "utf8")).newest_source_ms >= newestSource(root)
  } catch {
    return false
  }
}

if (built()) {
  await import("../dist/engram.mjs")
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/cli/main.ts")
}
