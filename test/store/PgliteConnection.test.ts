import { PGlite } from "@electric-sql/pglite"
import Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgliteConfig } from "../../services/store/PgliteConnection.ts"

describe("node-postgres on the embedded store", () => {
  let pglite: PGlite
  let pool: Pg.Pool
  let calls = 0

  beforeAll(async () => {
    pglite = await PGlite.create("memory://")
    const execute = pglite.execProtocolStream.bind(pglite)
    // Counts the entries into PostgreSQL.
    pglite.execProtocolStream = (message, options) => {
      calls++
      return execute(message, options)
    }
    pool = new Pg.Pool({ ...pgliteConfig(pglite), max: 1 })
    await pool.query("CREATE TABLE notes (id integer PRIMARY KEY, body text)")
  }, 60_000)

  afterAll(async () => {
    await pool.end()
    await pglite.close()
  })

  it("hands a statement's five messages to PostgreSQL at once", async () => {
    calls = 0
    const result = await pool.query("INSERT INTO notes VALUES ($1, $2), ($3, $4) RETURNING id", [1, "one", 2, "two"])
    expect(result.rows).toEqual([{ id: 1 }, { id: 2 }])
    expect(calls).toBe(1)
    calls = 0
    expect((await pool.query("SELECT body FROM notes WHERE id = $1", [2])).rows).toEqual([{ body: "two" }])
    expect(calls).toBe(1)
  })

  it("reports a failed statement with its code, and the next one runs", async () => {
    await expect(pool.query("INSERT INTO notes VALUES ($1, $2)", [1, "again"])).rejects.toMatchObject({ code: "23505" })
    await expect(pool.query("SELECT 1 / $1::int AS x", [0])).rejects.toMatchObject({ code: "22012" })
    expect((await pool.query("SELECT count(*)::int AS n FROM notes")).rows).toEqual([{ n: 2 }])
  })

  it("keeps a transaction's statements in order, and rolls one back whole", async () => {
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      await client.query("INSERT INTO notes VALUES ($1, $2)", [3, "three"])
      await expect(client.query("INSERT INTO notes VALUES ($1, $2)", [3, "dup"])).rejects.toMatchObject({ code: "23505" })
      await expect(client.query("SELECT 1")).rejects.toMatchObject({ code: "25P02" })
      await client.query("ROLLBACK")
    } finally {
      client.release()
    }
    expect((await pool.query("SELECT id FROM notes ORDER BY id")).rows).toEqual([{ id: 1 }, { id: 2 }])
  })

  it("answers statements sent without waiting, each with its own rows", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.query("SELECT $1::int * 2 AS twice", [i])))
    expect(answers.map((a) => a.rows[0].twice)).toEqual(Array.from({ length: 20 }, (_, i) => i * 2))
  })
})
