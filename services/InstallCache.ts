/**
 * What `npm install` prepares once (its `prepare` script, scripts/prepare.ts)
 * so a first start does not: the word vectors compacted from their 307 MB
 * JSON, and a migrated PGlite data directory to copy instead of running
 * initdb. Both live under `.cache/` at the package's root; a missing or
 * stale one is simply not used (the service builds its own, as before).
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

export const INSTALL_CACHE = join(import.meta.dirname, "..", ".cache")

/** The compacted word vectors, if install made them. */
export const installedGlove = () => {
  const file = join(INSTALL_CACHE, "glove-100d.bin")
  return existsSync(file) ? file : undefined
}

export const TEMPLATE_FILE = join(INSTALL_CACHE, "pglite-template.tar.gz")
export const TEMPLATE_STAMP = join(INSTALL_CACHE, "pglite-template.json")

/** The WAL segment size every data directory is made with (services/store/Database.ts); a template of another is not used. */
export const TEMPLATE_WAL_SEGMENT = 1 << 20

/** The migrated data directory (a gzipped tar), if install made it for exactly these migrations. */
export const installedTemplate = (migrations: ReadonlyArray<string>) => {
  if (!existsSync(TEMPLATE_FILE) || !existsSync(TEMPLATE_STAMP)) return undefined
  try {
    const stamp: unknown = JSON.parse(readFileSync(TEMPLATE_STAMP, "utf8"))
    const listed = typeof stamp === "object" && stamp !== null && "migrations" in stamp ? stamp.migrations : undefined
    const segment = typeof stamp === "object" && stamp !== null && "walSegmentBytes" in stamp ? stamp.walSegmentBytes : undefined
    if (segment !== TEMPLATE_WAL_SEGMENT) return undefined
    if (!Array.isArray(listed) || listed.join("\n") !== migrations.join("\n")) return undefined
    return new Blob([readFileSync(TEMPLATE_FILE)])
  } catch {
    return undefined
  }
}
