/** Session tokens: only the digest is stored; the row carries the organization the session acts in. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { Role } from "../../src/domain/Principal.ts"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const SessionRow = Schema.Struct({
  id: Schema.String,
  secret_hash: Schema.String,
  user_id: Schema.String,
  org_id: Schema.String,
  expires_at: Timestamptz,
  /** The user's current role in the session's organization; null once they left it. */
  role: Schema.NullOr(Role)
})
export type SessionRow = typeof SessionRow.Type

const decodeSessions = decodeRows(SessionRow)
const decodeExpiries = decodeRows(Schema.Struct({ expires_at: Timestamptz }))

export class SessionRepo extends Effect.Service<SessionRepo>()("engram/store/SessionRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      create: (row: { id: string; hash: string; userId: string; orgId: string; now: Date; expiresAt: Date }) =>
        sql`INSERT INTO sessions (id, secret_hash, user_id, org_id, created_at, expires_at)
            VALUES (${row.id}, ${row.hash}, ${row.userId}, ${row.orgId}, ${row.now}, ${row.expiresAt})`.pipe(
          Effect.asVoid,
          storeFailure
        ),
      /** The session with the user's current role in its organization (null once they left it). */
      find: (id: string) =>
        sql`SELECT s.id, s.secret_hash, s.user_id, s.org_id, s.expires_at, m.role
          FROM sessions s LEFT JOIN memberships m ON m.org_id = s.org_id AND m.user_id = s.user_id
          WHERE s.id = ${id}`.pipe(Effect.flatMap(decodeSessions), Effect.map((rows) => Option.fromNullable(rows[0])), storeFailure),
      /**
       * Ends session `oldId` and opens `id` in its place, acting in `orgId` and
       * expiring when the old one would have; none when the old one is gone.
       */
      replace: (row: { oldId: string; id: string; hash: string; userId: string; orgId: string; now: Date }) =>
        Effect.gen(function*() {
          const ended = yield* sql`DELETE FROM sessions WHERE id = ${row.oldId} AND user_id = ${row.userId}
            RETURNING expires_at`.pipe(Effect.flatMap(decodeExpiries))
          const expiresAt = ended[0]?.expires_at
          if (expiresAt === undefined) return Option.none<Date>()
          yield* sql`INSERT INTO sessions (id, secret_hash, user_id, org_id, created_at, expires_at)
            VALUES (${row.id}, ${row.hash}, ${row.userId}, ${row.orgId}, ${row.now}, ${expiresAt})`
          return Option.some(expiresAt)
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("SessionRepo.replace")),
      delete: (id: string) => sql`DELETE FROM sessions WHERE id = ${id}`.pipe(Effect.asVoid, storeFailure),
      deleteExpired: (now: Date) => sql`DELETE FROM sessions WHERE expires_at <= ${now}`.pipe(Effect.asVoid, storeFailure)
    }
  })
}) {}
