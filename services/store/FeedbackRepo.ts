/** Feedback members sent, for operators to read (`engram feedback list`). */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

export const FeedbackRow = Schema.Struct({
  feedback_id: Schema.String,
  org_id: Schema.String,
  org_name: Schema.NullOr(Schema.String),
  user_id: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  category: Schema.Literal("bug", "idea", "other"),
  message: Schema.String,
  page: Schema.NullOr(Schema.String),
  created_at: Timestamptz
})
export type FeedbackRow = typeof FeedbackRow.Type

const decodeFeedback = decodeRows(FeedbackRow)

export class FeedbackRepo extends Effect.Service<FeedbackRepo>()("engram/store/FeedbackRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return {
      insert: (row: {
        readonly feedbackId: string
        readonly orgId: string
        readonly userId: string | null
        readonly category: "bug" | "idea" | "other"
        readonly message: string
        readonly page: string | null
        readonly at: Date
      }) =>
        sql`INSERT INTO feedback (feedback_id, org_id, user_id, category, message, page, created_at)
          VALUES (${row.feedbackId}, ${row.orgId}, ${row.userId}, ${row.category}, ${row.message}, ${row.page}, ${row.at})`.pipe(
          Effect.asVoid,
          storeFailure
        ),

      /** Newest first, with who sent it; only `category` when given. */
      list: (limit: number, category?: FeedbackRow["category"]) =>
        sql`SELECT f.feedback_id, f.org_id, o.name AS org_name, f.user_id, u.email, f.category, f.message, f.page, f.created_at
          FROM feedback f LEFT JOIN organizations o ON o.id = f.org_id LEFT JOIN users u ON u.id = f.user_id
          WHERE ${category === undefined ? sql`TRUE` : sql`f.category = ${category}`}
          ORDER BY f.created_at DESC, f.feedback_id LIMIT ${limit}`.pipe(Effect.flatMap(decodeFeedback), storeFailure)
    }
  })
}) {}
