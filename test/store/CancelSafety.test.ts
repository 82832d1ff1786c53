/**
 * The server profile's pool and interrupted statements. @effect/sql-pg
 * cancels an interrupted fiber's statement with `pg_cancel_backend`, sent
 * behind whatever waits for the pool; by then the statement may have ended
 * and its connection be running another request's statement, which the
 * cancel then kills (57014). `layerPostgres` sends no such signal: the
 * interrupted statement's connection is closed when released, never reused.
 * PGlite has one backend and no cancel, so this runs on the server profile.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted, Schema } from "effect"
import { layerPostgres } from "../../services/store/Database.ts"
import { adminUrl } from "../support/Databases.ts"

const Pid = Schema.Array(Schema.Struct({ pid: Schema.Number }))

describe.skipIf(adminUrl === undefined)("interrupting a statement on the server profile", () => {
  it.live("never cancels another request's statement, however many are interrupted at once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let ok = 0
      const failures: Array<string> = []
      // Two fibers keep short statements running throughout, as other requests would.
      const others = Effect.forever(Effect.exit(sql.unsafe("SELECT pg_sleep(0.05)")).pipe(Effect.map((exit) => {
        if (Exit.isSuccess(exit)) ok++
        else failures.push(String(exit.cause))
      })))
      const running = yield* Effect.forEach([1, 2], () => Effect.fork(others))
      for (let round = 0; round < 4; round++) {
        // More statements than the pool has connections, interrupted together (a node stopping its entities does this).
        const victims = yield* Effect.forEach([1, 2, 3, 4], (i) => Effect.fork(sql.unsafe(`SELECT pg_sleep(${0.3 + i * 0.1})`)))
        yield* Effect.sleep("150 millis")
        yield* Effect.forEach(victims, Fiber.interrupt, { concurrency: "unbounded" })
        yield* Effect.sleep("1500 millis")
      }
      yield* Effect.forEach(running, Fiber.interrupt)
      expect(failures).toEqual([])
      expect(ok).toBeGreaterThan(50)
    }).pipe(Effect.provide(layerPostgres(Redacted.make(adminUrl!), 4))), 60_000)

  it.live("an interrupted statement's connection is not handed to the next statement, which does not wait for it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const sleeper = yield* Effect.fork(sql`SELECT pg_backend_pid() AS pid, pg_sleep(3)`)
      yield* Effect.sleep("300 millis")
      const before = Date.now()
      yield* Fiber.interrupt(sleeper)
      const next = yield* sql`SELECT pg_backend_pid() AS pid`.pipe(Effect.flatMap(Schema.decodeUnknown(Pid)))
      // Both answered at once: the interrupt sent nothing to wait for, and the statement after it had a connection of its own.
      expect(Date.now() - before).toBeLessThan(1000)
      const active = yield* sql`SELECT pid FROM pg_stat_activity WHERE query LIKE '%pg_sleep(3)%' AND pid <> pg_backend_pid()`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Pid))
      )
      // The interrupted statement still runs on its own backend, and the next statement ran elsewhere.
      expect(active).toHaveLength(1)
      expect(next[0]!.pid).not.toBe(active[0]!.pid)
    }).pipe(Effect.provide(layerPostgres(Redacted.make(adminUrl!), 1))), 30_000)
})
