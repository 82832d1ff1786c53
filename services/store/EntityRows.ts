/**
 * The entity graph's bookkeeping, kept in step with the memories it counts:
 * entities (one per canonical name) and co-occurrence edges (a pair of
 * entities, weighted by the memories naming both). Which memories mention an
 * entity is the memories' own `entity_keys` (the canonical keys of a raw
 * memory's entities, under a GIN index): a table of mentions cost a third of
 * a space's disk. Only raw memories count (facts, experiences and document
 * chunks as written); notes and summaries restate them and would count them
 * twice. These statements run inside the transaction that writes or deletes
 * the memories, so the graph never disagrees with the store.
 */
import type { SqlClient } from "@effect/sql"
import { createHash } from "node:crypto"
import { Effect, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { entityKey } from "../../src/ingestion/Entities.ts"
import { decodeRows, Int8 } from "./Columns.ts"

/** What a memory names, as stored on the memory (`entities`). */
export interface NamedEntity {
  readonly name: string
  readonly kind: string
}

/** A raw memory as the graph counts it. */
export interface Mentioning {
  readonly id: string
  readonly entities: ReadonlyArray<NamedEntity>
  /** The memory's event time: when its entities were mentioned. */
  readonly at: Date
}

/** A raw memory deleted: the canonical keys of the entities it named (its `entity_keys`). */
export interface Unmentioning {
  readonly id: string
  readonly keys: ReadonlyArray<string>
}

/** An entity's id: derived from its canonical key, so the same name is the same id in every rebuild. */
export const entityId = (key: string) => `ent_${createHash("sha256").update(key).digest("hex").slice(0, 20)}`

/** The distinct entities of a memory, by id (the first spelling of each key wins). */
export const canonicalEntities = (entities: ReadonlyArray<NamedEntity>) => {
  const byId = new Map<string, { readonly id: string; readonly key: string; readonly name: string; readonly kind: string }>()
  for (const entity of entities) {
    const key = entityKey(entity.name)
    if (key.length < 2) continue
    const id = entityId(key)
    if (!byId.has(id)) byId.set(id, { id, key, name: entity.name, kind: entity.kind })
  }
  return [...byId.values()]
}

/** A raw memory's `entity_keys`: the canonical keys of its entities, each once. */
export const entityKeys = (entities: ReadonlyArray<NamedEntity>) => canonicalEntities(entities).map((e) => e.key)

/** Each unordered pair of `ids` once, the smaller id first. */
const pairsOf = (ids: ReadonlyArray<string>) => {
  const sorted = [...ids].sort()
  const pairs: Array<readonly [string, string]> = []
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length; j++) pairs.push([sorted[i]!, sorted[j]!])
  }
  return pairs
}

const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))

export const makeEntityStatements = (sql: SqlClient.SqlClient) => {
  /** Counts the entities of newly stored raw memories (already written with their `entity_keys`): entity counts and times, edges. One statement. */
  const record = (space: SpaceRef, memories: ReadonlyArray<Mentioning>) =>
    Effect.gen(function*() {
      const mentions: Array<{ entity_id: string; name: string; kind: string; memory_id: string; at: number }> = []
      const pairs = new Map<string, { source: string; target: string; weight: number; at: number }>()
      for (const memory of memories) {
        const entities = canonicalEntities(memory.entities)
        const at = memory.at.getTime()
        for (const e of entities) mentions.push({ entity_id: e.id, name: e.name, kind: e.kind, memory_id: memory.id, at })
        for (const [source, target] of pairsOf(entities.map((e) => e.id))) {
          const key = `${source}|${target}`
          const pair = pairs.get(key)
          if (pair) {
            pair.weight++
            pair.at = Math.max(pair.at, at)
          } else pairs.set(key, { source, target, weight: 1, at })
        }
      }
      if (mentions.length === 0) return
      yield* sql`WITH m AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(mentions)}::jsonb)
            AS v(entity_id text, name text, kind text, memory_id text, at float8)
        ), counted AS (
          INSERT INTO entities (org_id, space_id, entity_id, name, kind, mention_count, first_seen, last_seen)
          SELECT ${space.orgId}::text, ${space.spaceId}::text, entity_id, (array_agg(name ORDER BY at))[1],
            (array_agg(kind ORDER BY at))[1], count(*), to_timestamp(min(at) / 1000), to_timestamp(max(at) / 1000)
          FROM m GROUP BY entity_id
          ON CONFLICT (org_id, space_id, entity_id) DO UPDATE SET
            mention_count = entities.mention_count + EXCLUDED.mention_count,
            first_seen = least(entities.first_seen, EXCLUDED.first_seen),
            last_seen = greatest(entities.last_seen, EXCLUDED.last_seen),
            name = CASE WHEN entities.name = lower(entities.name) AND EXCLUDED.name <> lower(EXCLUDED.name)
              THEN EXCLUDED.name ELSE entities.name END,
            kind = CASE WHEN entities.kind = 'thing' THEN EXCLUDED.kind ELSE entities.kind END
        )
        INSERT INTO entity_edges (org_id, space_id, source, target, weight, last_co_occurred)
        SELECT ${space.orgId}::text, ${space.spaceId}::text, source, target, weight, to_timestamp(at / 1000)
        FROM jsonb_to_recordset(${JSON.stringify([...pairs.values()])}::jsonb)
          AS p(source text, target text, weight integer, at float8)
        ON CONFLICT (org_id, space_id, source, target) DO UPDATE SET
          weight = entity_edges.weight + EXCLUDED.weight,
          last_co_occurred = greatest(entity_edges.last_co_occurred, EXCLUDED.last_co_occurred)`
    }).pipe(Effect.withSpan("EntityRows.record", { attributes: { memories: memories.length } }))

  /**
   * Uncounts deleted memories (gone from the store by now): counts and edge
   * weights fall, entities and edges at zero go, and first/last seen and
   * last_co_occurred are read again from the memories that remain.
   */
  const forget = (space: SpaceRef, gone: ReadonlyArray<Unmentioning>) =>
    Effect.gen(function*() {
      const counts = new Map<string, { key: string; n: number }>()
      const pairs = new Map<string, { source: string; target: string; source_key: string; target_key: string; n: number }>()
      for (const memory of gone) {
        const named = [...new Set(memory.keys)].filter((key) => key.length >= 2).map((key) => ({ key, id: entityId(key) }))
        for (const { id, key } of named) {
          const count = counts.get(id)
          if (count) count.n++
          else counts.set(id, { key, n: 1 })
        }
        const byId = new Map(named.map((e) => [e.id, e.key]))
        for (const [source, target] of pairsOf([...byId.keys()])) {
          const pairKey = `${source}|${target}`
          const pair = pairs.get(pairKey)
          if (pair) pair.n++
          else pairs.set(pairKey, { source, target, source_key: byId.get(source)!, target_key: byId.get(target)!, n: 1 })
        }
      }
      if (counts.size === 0) return
      const entityIds = [...counts.keys()]
      yield* sql`UPDATE entities e SET mention_count = e.mention_count - d.n,
          first_seen = coalesce((SELECT min(m.event_time) FROM memories m
            WHERE m.org_id = e.org_id AND m.space_id = e.space_id AND m.entity_keys @> ARRAY[d.key]), e.first_seen),
          last_seen = coalesce((SELECT max(m.event_time) FROM memories m
            WHERE m.org_id = e.org_id AND m.space_id = e.space_id AND m.entity_keys @> ARRAY[d.key]), e.last_seen)
        FROM jsonb_to_recordset(${JSON.stringify(entityIds.map((id) => ({ id, key: counts.get(id)!.key, n: counts.get(id)!.n })))}::jsonb)
          AS d(id text, key text, n integer)
        WHERE e.org_id = ${space.orgId} AND e.space_id = ${space.spaceId} AND e.entity_id = d.id`
      yield* sql`DELETE FROM entities WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
        AND entity_id = ANY(${entityIds}) AND mention_count <= 0`
      if (pairs.size === 0) return
      yield* sql`UPDATE entity_edges g SET weight = g.weight - d.n,
          last_co_occurred = (SELECT max(m.event_time) FROM memories m
            WHERE m.org_id = g.org_id AND m.space_id = g.space_id AND m.entity_keys @> ARRAY[d.source_key, d.target_key])
        FROM jsonb_to_recordset(${JSON.stringify([...pairs.values()])}::jsonb)
          AS d(source text, target text, source_key text, target_key text, n integer)
        WHERE g.org_id = ${space.orgId} AND g.space_id = ${space.spaceId} AND g.source = d.source AND g.target = d.target`
      yield* sql`DELETE FROM entity_edges WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}
        AND weight <= 0 AND source = ANY(${entityIds})`
    }).pipe(Effect.withSpan("EntityRows.forget", { attributes: { memories: gone.length } }))

  /** How many mentions a space has (memories x entities they name): for tests and checks of the bookkeeping. */
  const mentionCount = (space: SpaceRef) =>
    sql`SELECT coalesce(sum(cardinality(entity_keys)), 0) AS n FROM memories WHERE org_id = ${space.orgId} AND space_id = ${space.spaceId}`.pipe(
      Effect.flatMap(decodeCount),
      Effect.map((rows) => rows[0]?.n ?? 0)
    )

  return { record, forget, mentionCount }
}
