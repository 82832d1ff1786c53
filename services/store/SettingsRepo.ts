/**
 * Per-space settings documents (profile, chat, reason), stored as JSON and
 * decoded by their service. A deleted space takes its settings with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { decodeRows } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

/** The stored document stays unknown here: each service decodes its own kind with its schema. */
const decodeValues = decodeRows(Schema.Struct({ value: Schema.Unknown }))

export type SettingsKind = "profile" | "chat" | "reason"

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
