/**
 * Reads of a space's entity graph. The tables are maintained as memories are
 * written and deleted (EntityRows), so every read here is an index lookup,
 * never a recount of the space's memories.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import type { EntityDetail, EntityItem, Graph } from "../../src/domain/Documents.ts"
import { entityKey } from "../../src/ingestion/Entities.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

/** Observations listed with an entity: its most recent mentions. */
export const OBSERVATIONS = 100

const EntityRow = Schema.Struct({
  entity_id: Schema.String,
  name: Schema.String,
  mention_count: Int8,
  first_seen: Timestamptz,
  last_seen: Timestamptz
})
/**
 * A graph's edges arrive as one JSON array of [source, target, weight,
 * last_co_occurred] rows: thousands of edges as one value cost a quarter of
 * what they cost as rows through the embedded store's wire (25 against 85 ms
 * for 7,500 edges).
 */
const EdgeList = Schema.Struct({
  edges: Schema.Array(Schema.Tuple(Schema.String, Schema.String, Schema.Number, Schema.NullOr(Timestamptz)))
})

const toItem = (row: typeof EntityRow.Type): EntityItem => ({
  id: row.entity_id,
  name: row.name,
  mention_count: row.mention_count,
  first_seen: row.first_seen.toISOString(),
  last_seen: row.last_seen.toISOString()
})

const decodeEntities = decodeRows(EntityRow)
const decodeEdges = decodeRows(EdgeList)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodeObservations = decodeRows(Schema.Struct({ text: Schema.String, mentioned_at: Timestamptz }))

export class GraphRepo extends Effect.Service<GraphRepo>()("engram/store/GraphRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const count = (rows: ReadonlyArray<unknown>) => Effect.map(decodeCount(rows), (r) => r[0]?.n ?? 0)

    return {
      /** Most mentioned first. */
      entities: (space: SpaceRef, limit: number, offset: number) =>
        Effect.all({
          items: sql`SELECT entity_id, name, mention_count, first_seen, last_seen FROM entities
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
            ORDER BY mention_count DESC, entity_id LIMIT ${limit} OFFSET ${offset}`.pipe(Effect.flatMap(decodeEntities)),
          total: sql`SELECT count(*) AS n FROM entities WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`.pipe(
            Effect.flatMap(count)
          )
        }, { concurrency: 1 }).pipe(
          Effect.map(({ items, total }) => ({ items: items.map(toItem), total, limit, offset })),
          storeFailure
        ),

      /** One entity with its most recent observations (the memories that mention it), newest first. */
      entity: (space: SpaceRef, entityId: string) =>
        Effect.gen(function*() {
          const rows = yield* sql`SELECT entity_id, name, mention_count, first_seen, last_seen FROM entities
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND entity_id = ${entityId}`.pipe(
            Effect.flatMap(decodeEntities)
          )
          const row = rows[0]
          if (row === undefined) return Option.none<EntityDetail>()
          // The memories naming it carry its key (the key of every spelling of its name, the first one's included).
          const observations = yield* sql`SELECT text, event_time AS mentioned_at FROM memories
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND entity_keys @> ARRAY[${entityKey(row.name)}]
            ORDER BY event_time DESC, id LIMIT ${OBSERVATIONS}`.pipe(Effect.flatMap(decodeObservations))
          return Option.some({
            ...toItem(row),
            observations: observations.map((o) => ({ text: o.text, mentioned_at: o.mentioned_at.toISOString() }))
          })
        }).pipe(storeFailure),

      /**
       * The `limit` most mentioned entities with at least `minCount` mentions,
       * and the edges between them (heaviest first). The totals count the
       * whole space: every entity with at least `minCount` mentions, and every
       * edge between two such entities.
       */
      graph: (space: SpaceRef, limit: number, minCount: number) =>
        Effect.gen(function*() {
          const nodes = yield* sql`SELECT entity_id, name, mention_count, first_seen, last_seen FROM entities
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND mention_count >= ${minCount}
            ORDER BY mention_count DESC, entity_id LIMIT ${limit}`.pipe(Effect.flatMap(decodeEntities))
          const ids = nodes.map((n) => n.entity_id)
          const edges = ids.length < 2 ? [] : yield* sql`SELECT coalesce(
              json_agg(json_build_array(source, target, weight, last_co_occurred) ORDER BY weight DESC, source, target),
              '[]') AS edges
            FROM entity_edges
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
              AND source = ANY(${ids}) AND target = ANY(${ids})`.pipe(
            Effect.flatMap(decodeEdges),
            Effect.map((rows) => rows[0]?.edges ?? [])
          )
          const totalEntities = yield* sql`SELECT count(*) AS n FROM entities
            WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId} AND mention_count >= ${minCount}`.pipe(
            Effect.flatMap(count)
          )
          const totalEdges = minCount <= 1
            ? yield* sql`SELECT count(*) AS n FROM entity_edges WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`
              .pipe(Effect.flatMap(count))
            : yield* sql`SELECT count(*) AS n FROM entity_edges g
              JOIN entities a ON a.org_id = g.org_id AND a.space_id = g.space_id AND a.entity_id = g.source
              JOIN entities b ON b.org_id = g.org_id AND b.space_id = g.space_id AND b.entity_id = g.target
              WHERE g.org_id = ${space.orgId} AND g.space_id = ${space.spaceId}
                AND a.mention_count >= ${minCount} AND b.mention_count >= ${minCount}`.pipe(Effect.flatMap(count))
          const label = new Map(nodes.map((n) => [n.entity_id, n.name]))
          const graph: Graph = {
            nodes: nodes.map((n) => ({ id: n.entity_id, label: n.name, mention_count: n.mention_count })),
            edges: edges.map(([source, target, weight, lastCoOccurred]) => ({
              source,
              target,
              source_label: label.get(source) ?? "",
              target_label: label.get(target) ?? "",
              weight,
              last_co_occurred: lastCoOccurred?.toISOString() ?? null
            })),
            total_entities: totalEntities,
            total_edges: totalEdges
          }
          return graph
        }).pipe(storeFailure, Effect.withSpan("GraphRepo.graph"))
    }
  })
}) {}
