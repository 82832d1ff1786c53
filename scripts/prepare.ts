/**
 * `npm install` runs this (the `prepare` script): what a first start would
 * otherwise do itself, done once per install under `.cache/`.
 * - The word vectors compacted from their 307 MB JSON (about 10 s and 1 GB
 *   of memory, here instead of at first start).
 * - A migrated PGlite data directory, so a first start copies it instead of
 *   running initdb (about 5 s and 500 MB more memory).
 * A failure here is reported and leaves the service to do the work at start.
 */
import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { compact } from "../services/embedder/Glove.ts"
import { INSTALL_CACHE, installedGlove, installedTemplate, TEMPLATE_FILE, TEMPLATE_STAMP, TEMPLATE_WAL_SEGMENT } from "../services/InstallCache.ts"
import { layerPglite } from "../services/store/Database.ts"
import * as Migrations from "../services/store/Migrations.ts"

const step = async (what: string, run: () => Promise<void>) => {
  const started = performance.now()
  try {
    await run()
    console.log(`engram prepare: ${what} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
  } catch (e) {
    console.warn(`engram prepare: ${what} failed, the service will do it at start: ${e instanceof Error ? e.message : String(e)}`)
  }
}

mkdirSync(INSTALL_CACHE, { recursive: true })

if (installedGlove() === undefined) {
  await step("word vectors compacted", async () => compact(join(INSTALL_CACHE, "glove-100d.bin")))
}

if (installedTemplate(Migrations.MIGRATION_NAMES) === undefined) {
  await step("store template migrated", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "engram-prepare-"))
    try {
      const directory = join(scratch, "pglite")
      await Effect.runPromise(Migrations.migrate.pipe(Effect.provide(layerPglite({ dataDir: directory })), Effect.scoped))
      const pglite = await PGlite.create(directory)
      const dump = await pglite.dumpDataDir("gzip")
      await pglite.close()
      writeFileSync(TEMPLATE_FILE, Buffer.from(await dump.arrayBuffer()))
      writeFileSync(TEMPLATE_STAMP, JSON.stringify({ migrations: Migrations.MIGRATION_NAMES, walSegmentBytes: TEMPLATE_WAL_SEGMENT }))
    } finally {
      if (existsSync(scratch)) rmSync(scratch, { recursive: true, force: true })
    }
  })
}
