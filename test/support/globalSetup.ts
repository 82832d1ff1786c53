/**
 * Once per run: a migrated PGlite data directory that every test file clones
 * (a fresh initdb costs seconds), and, when DATABASE_URL is set, a migrated
 * PostgreSQL template database that each server-profile node copies into a
 * database of its own (nodes are cluster runners: each needs its own cluster
 * tables and advisory locks); dropped at the end.
 */
import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Pg from "pg"
import { loadGlove } from "../../services/embedder/Glove.ts"
import { layerPglite } from "../../services/store/Database.ts"
import * as Migrations from "../../services/store/Migrations.ts"

const migrateWith = (layer: Layer.Layer<PgClient.PgClient | import("@effect/sql").SqlClient.SqlClient, unknown>) =>
  Effect.runPromise(Migrations.migrate.pipe(Effect.provide(layer), Effect.scoped))

export default async function setup() {
  const dir = mkdtempSync(join(tmpdir(), "engram-test-"))
  const scratch = join(dir, "template")
  await migrateWith(layerPglite({ dataDir: scratch }))
  const pglite = await PGlite.create(scratch)
  const dump = await pglite.dumpDataDir("none")
  await pglite.close()
  const templateFile = join(dir, "template.tar")
  writeFileSync(templateFile, Buffer.from(await dump.arrayBuffer()))
  process.env.ENGRAM_TEST_TEMPLATE = templateFile

  // Word vectors are compacted once per machine (several seconds), then reused by every run.
  const modelsDir = join(tmpdir(), "engram-test-models")
  await loadGlove(modelsDir)
  process.env.ENGRAM_TEST_MODELS_DIR = modelsDir

  let dropDatabase = async () => {}
  const serverUrl = process.env.DATABASE_URL
  if (serverUrl) {
    const name = `engram_test_${process.pid}_${Date.now()}`
    const admin = new Pg.Client({ connectionString: serverUrl })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    await migrateWith(PgClient.layer({ url: Redacted.make(url.toString()) }))
    // Copies need the template to have no open connections: the migration's pool is closed by now.
    process.env.ENGRAM_TEST_TEMPLATE_DATABASE = name
    process.env.ENGRAM_TEST_ADMIN_URL = serverUrl
    dropDatabase = async () => {
      const admin = new Pg.Client({ connectionString: serverUrl })
      await admin.connect()
      // Nodes drop their own copies; whatever a crashed test file left goes with the template.
      const copies = await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE '${name}_n%'`)
      for (const row of copies.rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`)
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }

  return async () => {
    await dropDatabase()
    rmSync(dir, { recursive: true, force: true })
  }
}
