/**
 * PGlite is single-process: two processes on one data directory would corrupt
 * it. A lock file holding the owner's pid makes the second one stop with a clear
 * message instead; a lock left by a dead process is taken over.
 */
import { Data, Effect } from "effect"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { join, resolve } from "node:path"

export class DataDirBusy extends Data.TaggedError("DataDirBusy")<{ readonly message: string }> {}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const tryLock = (file: string): number | "locked" => {
  try {
    const fd = openSync(file, "wx")
    writeSync(fd, String(process.pid))
    closeSync(fd)
    return "locked"
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    return Number(readFileSync(file, "utf8").trim()) || 0
  }
}

export const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true })
        const file = join(dataDir, "engram.lock")
        let holder = tryLock(file)
        if (holder !== "locked" && holder !== process.pid && !alive(holder)) {
          rmSync(file, { force: true })
          holder = tryLock(file)
        }
        if (holder !== "locked") {
          throw new DataDirBusy({
            message: `the embedded store at ${resolve(dataDir)} is in use by another Engram process (pid ${holder}); ` +
              "stop it first, or use its HTTP API"
          })
        }
        return file
      },
      catch: (error) =>
        error instanceof DataDirBusy ? error : new DataDirBusy({ message: `cannot lock ${dataDir}: ${String(error)}` })
    }),
    (file) => Effect.sync(() => rmSync(file, { force: true }))
  )
