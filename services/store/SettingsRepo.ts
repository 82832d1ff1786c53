/**
 * Per-space settings documents (profile, chat, reason, extraction), stored as JSON and
 * decoded by their service. A deleted space takes its settings with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

/** The stored document stays unknown here: each service decodes its own kind with its schema. */
const decodeValues = decodeRows(Schema.Struct({ value: Schema.Unknown }))
const decodeStamped = decodeRows(Schema.Struct({ value: Schema.Unknown, updated_at: Timestamptz }))

export type SettingsKind = "profile" | "chat" | "reason" | "extraction"

export class SettingsRepo extends Effect.Service<SettingsRepo>()("engram/store/SettingsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      get: (orgId: string, spaceId: string, kind: SettingsKind) =>
        sql`SELECT value FROM space_settings
          WHERE org_id = ${orgId} AND space_id = ${spaceId} AND kind = ${kind}`.pipe(
          Effect.flatMap(decodeValues),
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((row) => row.value))),
          storeFailure
        ),

      /** The stored document with when it was last put. */
      getStamped: (orgId: string, spaceId: string, kind: SettingsKind) =>
        sql`SELECT value, updated_at FROM space_settings
          WHERE org_id = ${orgId} AND space_id = ${spaceId} AND kind = ${kind}`.pipe(
          Effect.flatMap(decodeStamped),
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((row) => ({ value: row.value, updatedAt: row.updated_at })))),
          storeFailure
        ),

      put: (orgId: string, spaceId: string, kind: SettingsKind, value: unknown, now: Date) =>
        sql`INSERT INTO space_settings (org_id, space_id, kind, value, updated_at)
          VALUES (${orgId}, ${spaceId}, ${kind}, ${JSON.stringify(value)}::jsonb, ${now})
          ON CONFLICT (org_id, space_id, kind) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`.pipe(
          Effect.asVoid,
          storeFailure,
          Effect.withSpan("SettingsRepo.put", { attributes: { kind } })
        ),

      delete: (orgId: string, spaceId: string, kind: SettingsKind) =>
        sql`DELETE FROM space_settings WHERE org_id = ${orgId} AND space_id = ${spaceId} AND kind = ${kind}`.pipe(
          Effect.asVoid,
          storeFailure
        )
    }
  })
}) {}
