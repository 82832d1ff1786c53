/**
 * Packages from npm installed once into a directory of `.cache/` (Node
 * runtimes, the MCP conformance suite): into a staging directory beside it,
 * renamed into place once complete, so an interrupted install is never taken
 * for a finished one and two runs at once do not mix their files.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"

export type Log = (text: string) => void

/** Exit code, stdout and stderr of a finished child; `streamed` sees the output as it comes. */
export const run = async (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly timeoutMs: number; readonly streamed?: Log }
) => {
  const child = spawn(command, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"], env: process.env })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString()
    options.streamed?.(d.toString())
  })
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString()
    options.streamed?.(d.toString())
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill("SIGKILL")
  }, options.timeoutMs)
  let code = -1
  try {
    const [exitCode]: Array<unknown> = await once(child, "close")
    if (typeof exitCode === "number") code = exitCode
  } catch (error) {
    // The command could not be started (not on PATH, not executable).
    stderr += error instanceof Error ? error.message : String(error)
  }
  clearTimeout(timer)
  return { code, stdout, stderr, timedOut }
}

export type Installed<A> =
  | { readonly _tag: "Installed"; readonly value: A }
  | { readonly _tag: "Failed"; readonly code: number; readonly output: string }

/**
 * `dependencies` installed into `dir`, unless `installed(dir)` finds them
 * there already. `installed` also checks the staging directory before it is
 * renamed into place; a copy left incomplete (by hand) is replaced. A failed
 * `npm install` answers `Failed` with its output (the caller decides whether
 * that is an unreachable registry or an error).
 */
export const installOnce = async <A>(options: {
  readonly dir: string
  readonly dependencies: Readonly<Record<string, string>>
  readonly installed: (dir: string) => A | undefined
  readonly npmArgs?: ReadonlyArray<string>
  readonly timeoutMs?: number
}): Promise<Installed<A>> => {
  const ready = options.installed(options.dir)
  if (ready !== undefined) return { _tag: "Installed", value: ready }
  const root = dirname(options.dir)
  mkdirSync(root, { recursive: true })
  const staging = mkdtempSync(join(root, "staging-"))
  try {
    writeFileSync(join(staging, "package.json"), JSON.stringify({ private: true, dependencies: options.dependencies }, null, 2))
    const install = await run(
      "npm",
      ["install", "--prefix", staging, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", ...(options.npmArgs ?? [])],
      { cwd: staging, timeoutMs: options.timeoutMs ?? 600_000 }
    )
    if (install.code !== 0) return { _tag: "Failed", code: install.code, output: `${install.stdout}${install.stderr}` }
    if (options.installed(staging) === undefined) {
      throw new Error(`npm install did not leave ${Object.entries(options.dependencies).map(([n, v]) => `${n}@${v}`).join(", ")} in ${staging}`)
    }
    if (existsSync(options.dir) && options.installed(options.dir) === undefined) rmSync(options.dir, { recursive: true, force: true })
    try {
      renameSync(staging, options.dir)
    } catch (error) {
      // Another run finished first: its copy serves.
      if (options.installed(options.dir) === undefined) throw error
    }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
  const value = options.installed(options.dir)
  if (value === undefined) throw new Error(`${options.dir} is not complete after its install`)
  return { _tag: "Installed", value }
}
