/**
 * `bin/engram.mjs` runs dist/ while it is newer than every source, else the
 * sources through tsx, and says so on stderr when a bundle is there but
 * stale (an edit since the last build: slower to start and to wake). Run on
 * a copy of the bin in a tree of its own, whose dist/ and src/ hold only a
 * module that prints which one ran.
 */
import { spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"

const ROOT = join(import.meta.dirname, "..", "..")
const NOTICE = "dist/ is older than the sources"

const trees: Array<string> = []
afterEach(() => {
  for (const tree of trees.splice(0)) rmSync(tree, { recursive: true, force: true })
})

/** A tree with the bin, a dist/ stamped at `stampMs` and a source last changed at `sourceMs`; what `engram` printed. */
const run = (stampMs: number | undefined, sourceMs: number, env: Record<string, string> = {}) => {
  const tree = mkdtempSync(join(tmpdir(), "engram-bin-"))
  trees.push(tree)
  mkdirSync(join(tree, "bin"))
  for (const file of ["engram.mjs", "sources.mjs"]) copyFileSync(join(ROOT, "bin", file), join(tree, "bin", file))
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"))
  writeFileSync(join(tree, "package.json"), JSON.stringify({ name: "tree", type: "module" }))
  mkdirSync(join(tree, "src", "cli"), { recursive: true })
  for (const directory of ["layers", "services"]) mkdirSync(join(tree, directory))
  writeFileSync(join(tree, "src", "cli", "main.ts"), "console.log('sources')\n")
  mkdirSync(join(tree, "dist"))
  writeFileSync(join(tree, "dist", "engram.mjs"), "console.log('bundle')\n")
  if (stampMs !== undefined) writeFileSync(join(tree, "dist", "build.json"), JSON.stringify({ newest_source_ms: stampMs }))
  const seconds = sourceMs / 1000
  for (const path of ["package.json", join("src", "cli", "main.ts")]) utimesSync(join(tree, path), seconds, seconds)
  const base = { ...process.env }
  delete base.ENGRAM_FROM_SOURCES
  const result = spawnSync(process.execPath, [join(tree, "bin", "engram.mjs")], { env: { ...base, ...env }, encoding: "utf8", timeout: 60_000 })
  expect(result.status).toBe(0)
  return { stdout: result.stdout.trim(), stderr: result.stderr }
}

describe("which code engram runs", () => {
  const built = Date.UTC(2026, 0, 2)
  it("runs the bundle built after every source, without a word", () => {
    const { stderr, stdout } = run(built, built - 60_000)
    expect(stdout).toBe("bundle")
    expect(stderr).not.toContain(NOTICE)
  })

  it("runs the sources, and says why, when a source changed after the bundle was built", () => {
    const { stderr, stdout } = run(built, built + 60_000)
    expect(stdout).toBe("sources")
    expect(stderr).toContain(NOTICE)
  })

  it("runs the sources quietly when asked to, or when nothing was ever built", () => {
    expect(run(built, built + 60_000, { ENGRAM_FROM_SOURCES: "1" })).toEqual({ stdout: "sources", stderr: "" })
    expect(run(undefined, built)).toEqual({ stdout: "sources", stderr: "" })
  })
})
