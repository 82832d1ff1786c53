/**
 * Server-profile tests give every node (or cluster) a PostgreSQL database of
 * its own, copied from the run's migrated template (see globalSetup.ts).
 */
import Pg from "pg"

export const templateDatabase = process.env.ENGRAM_TEST_TEMPLATE_DATABASE
export const adminUrl = process.env.ENGRAM_TEST_ADMIN_URL

let copies = 0

const withAdmin = async <A>(f: (client: Pg.Client) => Promise<A>) => {
  const client = new Pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** A fresh copy of the template: its URL, and `drop` to remove it. */
export const copyTemplate = async () => {
  const name = `${templateDatabase}_n${process.pid}_${++copies}`
  await withAdmin(async (admin) => {
    // Two copies of the template made at the same moment can collide; the copy is retried.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${templateDatabase}`)
        return
      } catch (error) {
        if (attempt >= 20 || !/being accessed by other users/.test(String(error))) throw error
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200))
      }
    }
  })
  const url = new URL(adminUrl!)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined)
  }
}
