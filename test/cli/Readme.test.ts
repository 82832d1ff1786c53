/**
 * The README's Quickstart, run as written against a fresh `engram serve`: its
 * shell blocks by bash (the answers shown in its comments must appear in
 * what the commands print), then its TypeScript block with the key they
 * made. And every `npm run` script the README names exists, so no command in
 * it can go stale unseen.
 */
import { execFile } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { startServer, withDataDir } from "../support/Process.ts"

const run = promisify(execFile)
const root = join(import.meta.dirname, "..", "..")
const readme = readFileSync(join(root, "README.md"), "utf8")

/** The fenced blocks of one language in the README section that starts with `heading`. */
const blocks = (heading: string, language: string): Array<string> => {
  const start = readme.indexOf(`\n${heading}\n`)
  expect(start, `the README has a section ${heading}`).toBeGreaterThanOrEqual(0)
  const end = readme.indexOf("\n## ", start + heading.length + 2)
  const section = readme.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!)
}

/** `"key":value` pieces of the answers the comments show, leaving out the ones elided with "…". */
const shownAnswers = (script: string): Array<string> =>
  script.split("\n").filter((line) => /^#\s+[{"]/.test(line.trim())).flatMap((line) =>
    [...line.matchAll(/"[a-z_]+":(?:"[^"]*"|\[(?:"[^"]*",?)*\]|-?\d+(?:\.\d+)?|true|false)/g)].map((m) => m[0]).filter((piece) => !piece.includes("…")))

describe("the README", () => {
  it("its Quickstart runs as written: the shell session prints what its comments show, and the TypeScript example recalls", async () => {
    const [script, ...more] = blocks("## Quickstart", "sh")
    expect(more).toEqual([])
    const [example] = blocks("## Quickstart", "ts")
    const expected = shownAnswers(script!)
    expect(expected).toContain('"relevance_score":0.56')
    expect(expected.length).toBeGreaterThan(12)
    await withDataDir(async (dataDir) => {
      const server = await startServer({ DATA_DIR: dataDir, CONSOLIDATION: "off" })
      try {
        const shell = await run("bash", ["-euo", "pipefail", "-c", `${script}\necho\necho "KEY=$KEY"`], {
          env: { ...process.env, ENGRAM: server.url }
        })
        for (const piece of expected) expect(shell.stdout, `the Quickstart's output shows ${piece}`).toContain(piece)
        const key = /^KEY=(svc_live_\S+)$/m.exec(shell.stdout)?.[1]
        expect(key).toBeDefined()

        // Inside the package, so that `engram/client` resolves to the package's own export (dist/).
        const dir = join(root, ".cache", "readme-example")
        mkdirSync(dir, { recursive: true })
        const file = join(dir, `example-${process.pid}.ts`)
        writeFileSync(file, example!)
        try {
          const ts = await run(process.execPath, ["--import", "tsx/esm", file], { env: { ...process.env, ENGRAM: server.url, KEY: key! } })
          expect(ts.stdout.trim()).toBe("Biscuit is afraid of thunderstorms.")
        } finally {
          rmSync(file, { force: true })
        }
      } finally {
        await server.stop()
      }
    })
  }, 120_000)

  it("names only npm scripts that exist, and stays within 250 lines", () => {
    const scripts = Object.keys(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts)
    const named = [...new Set([...readme.matchAll(/`((?:bench|eval|test|screenshots)[a-z:]*)[` ]/g)].map((m) => m[1]!))]
      .filter((name) => name.includes(":") || name === "screenshots")
    expect(named.length).toBeGreaterThan(10)
    expect(named.filter((name) => !scripts.includes(name))).toEqual([])
    expect(readme.split("\n").length).toBeLessThanOrEqual(251)
  })
})
