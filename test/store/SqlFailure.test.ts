/**
 * The repository boundary on PostgreSQL: a statement the server cancels
 * though no one here asked (the driver's cancel of another, interrupted
 * statement can land on it) is a 503 the caller may retry, never a defect.
 * PGlite has one backend and no cancel, so this runs on the server profile.
 */
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Redacted, Schedule } from "effect"
import { storeFailure } from "../../services/store/SqlFailure.ts"
import { adminUrl } from "../support/Databases.ts"

describe.skipIf(adminUrl === undefined)("a statement PostgreSQL cancels", () => {
  it.live("fails as ServiceUnavailable (503), not as a defect; the next statement runs", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const marker = `cancelled_${Date.now()}`
      const sleeper = yield* Effect.fork(storeFailure(sql.unsafe(`SELECT pg_sleep(30) AS ${marker}`)))
      // Another connection finds the sleeping statement's backend and cancels it, as a stray cancel would.
      const cancelled = yield* sql<{ cancelled: boolean }>`SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity
        WHERE query LIKE ${`%${marker}%`} AND pid <> pg_backend_pid() AND state = 'active'`.pipe(
        Effect.filterOrFail((rows) => rows.length === 1, () => "not running yet"),
        Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("10 seconds")))
      )
      expect(cancelled[0]!.cancelled).toBe(true)
      const exit = yield* Fiber.await(sleeper)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.isDie(exit.cause)).toBe(false)
        const failure = Cause.failureOption(exit.cause)
        expect(failure._tag).toBe("Some")
        if (failure._tag === "Some") expect(failure.value._tag).toBe("ServiceUnavailable")
      }
      expect(yield* sql<{ one: number }>`SELECT 1 AS one`).toEqual([{ one: 1 }])
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(adminUrl!), maxConnections: 3 }))), 30_000)
})
