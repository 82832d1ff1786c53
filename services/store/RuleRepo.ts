/** A space's rules, oldest first; a deleted space takes them with it. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { Detector, type Rule, RuleAction } from "../../src/domain/Rules.ts"
import { decodeRows, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const RuleRow = Schema.Struct({
  rule_id: Schema.String,
  name: Schema.String,
  detector: Detector,
  pattern: Schema.NullOr(Schema.String),
  action: RuleAction,
  enabled: Schema.Boolean,
  created_at: Timestamptz
})
const decodeRules = decodeRows(RuleRow)

const toRule = (row: typeof RuleRow.Type): Rule => ({
  id: row.rule_id,
  name: row.name,
  detector: row.detector,
  pattern: row.pattern,
  action: row.action,
  enabled: row.enabled,
  created_at: row.created_at.toISOString()
})

const COLUMNS = "rule_id, name, detector, pattern, action, enabled, created_at"

export class RuleRepo extends Effect.Service<RuleRepo>()("engram/store/RuleRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)
    return {
      list: (space: SpaceRef) =>
        sql`SELECT ${columns} FROM space_rules WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
          ORDER BY created_at, rule_id`.pipe(Effect.flatMap(decodeRules), Effect.map((rows) => rows.map(toRule)), storeFailure),

      /** The enabled rules, read for every write so a change applies to the next write on every node. */
      enabled: (space: SpaceRef) =>
        sql`SELECT ${columns} FROM space_rules
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND enabled
          ORDER BY created_at, rule_id`.pipe(Effect.flatMap(decodeRules), Effect.map((rows) => rows.map(toRule)), storeFailure),

      /** The enabled rules of a space, or none when the space does not exist (yet). */
      enabledIfSpace: (space: SpaceRef) =>
        sql`SELECT s.space_id AS held, r.rule_id, r.name, r.detector, r.pattern, r.action, r.enabled, r.created_at
          FROM spaces s LEFT JOIN space_rules r
            ON r.org_id = s.org_id AND r.space_id = s.space_id AND r.enabled
          WHERE s.org_id = ${space.orgId} AND s.space_id = ${space.spaceId}
          ORDER BY r.created_at, r.rule_id`.pipe(
          Effect.flatMap(decodeRows(Schema.Union(
            Schema.Struct({ held: Schema.String, ...RuleRow.fields }),
            Schema.Struct({ held: Schema.String, rule_id: Schema.Null })
          ))),
          Effect.map((rows) =>
            rows.length === 0
              ? Option.none<ReadonlyArray<Rule>>()
              : Option.some(rows.flatMap((row) => (row.rule_id === null || !("name" in row) ? [] : [toRule(row)])))
          ),
          storeFailure
        ),

      create: (space: SpaceRef, rule: Rule) =>
        sql`INSERT INTO space_rules (org_id, space_id, rule_id, name, detector, pattern, action, enabled, created_at)
          VALUES (${space.orgId}, ${space.spaceId}, ${rule.id}, ${rule.name}, ${rule.detector}, ${rule.pattern},
            ${rule.action}, ${rule.enabled}, ${new Date(rule.created_at)})`.pipe(Effect.as(rule), storeFailure),

      find: (space: SpaceRef, ruleId: string) =>
        sql`SELECT ${columns} FROM space_rules
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND rule_id = ${ruleId}`.pipe(
          Effect.flatMap(decodeRules),
          Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map(toRule))),
          storeFailure
        ),

      update: (space: SpaceRef, rule: Rule) =>
        sql`UPDATE space_rules SET name = ${rule.name}, detector = ${rule.detector}, pattern = ${rule.pattern},
            action = ${rule.action}, enabled = ${rule.enabled}
          WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND rule_id = ${rule.id}`.pipe(
          Effect.as(rule),
          storeFailure
        ),

      delete: (space: SpaceRef, ruleId: string) =>
        sql`DELETE FROM space_rules WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND rule_id = ${ruleId}
          RETURNING rule_id`.pipe(
          Effect.flatMap(decodeRows(Schema.Struct({ rule_id: Schema.String }))),
          Effect.map((rows) => rows.length > 0),
          storeFailure
        )
    }
  })
}) {}
