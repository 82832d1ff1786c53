/**
 * Webhooks and their deliveries. A delivery is queued by `enqueue` inside
 * the transaction of the change it reports (the outbox), for every enabled
 * webhook of the space subscribed to the event at that moment; the space's
 * delivery loop claims what is due, sends it, and settles it here.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { SpaceRef } from "../../src/domain/Ids.ts"
import { OrgId, SpaceId } from "../../src/domain/Ids.ts"
import { decodeRows, Int8, Timestamptz } from "./Columns.ts"
import { storeFailure } from "./SqlFailure.ts"

const WebhookRow = Schema.Struct({
  webhook_id: Schema.String,
  space_id: Schema.String,
  url: Schema.String,
  event_types: Schema.Array(Schema.String),
  enabled: Schema.Boolean,
  secret_sealed: Schema.String,
  created_at: Timestamptz,
  updated_at: Timestamptz
})
export type WebhookRow = typeof WebhookRow.Type

export const DeliveryStatus = Schema.Literal("pending", "processing", "completed", "failed")

const DeliveryRow = Schema.Struct({
  delivery_id: Schema.String,
  webhook_id: Schema.String,
  event_type: Schema.String,
  operation_id: Schema.String,
  url: Schema.String,
  status: DeliveryStatus,
  attempts: Int8,
  response_status: Schema.NullOr(Int8),
  error: Schema.NullOr(Schema.String),
  next_retry_at: Schema.NullOr(Timestamptz),
  last_attempt_at: Schema.NullOr(Timestamptz),
  created_at: Timestamptz
})
export type DeliveryRow = typeof DeliveryRow.Type

/** A claimed delivery, with what its attempt needs: the bytes, and the webhook as it is now. */
const ClaimedRow = Schema.Struct({
  ...DeliveryRow.fields,
  body: Schema.String,
  current_url: Schema.String,
  secret_sealed: Schema.String
})
export type ClaimedRow = typeof ClaimedRow.Type

/** An event to queue: the same bytes go to every subscribed webhook. */
export interface OutboxEvent {
  readonly eventType: string
  readonly operationId: string
  readonly body: string
}

/** How an attempt ended, as stored. */
export interface Settlement {
  readonly status: "pending" | "completed" | "failed"
  readonly responseStatus: number | null
  readonly error: string | null
  readonly nextRetryAt: Date | null
}

export interface WebhookPatch {
  readonly url?: string | undefined
  readonly eventTypes?: ReadonlyArray<string> | undefined
  readonly enabled?: boolean | undefined
}

const decodeWebhooks = decodeRows(WebhookRow)
const decodeDeliveries = decodeRows(DeliveryRow)
const decodeClaimed = decodeRows(ClaimedRow)
const decodeCount = decodeRows(Schema.Struct({ n: Int8 }))
const decodeDue = decodeRows(Schema.Struct({ at: Schema.NullOr(Timestamptz) }))
const decodeSpaces = decodeRows(Schema.Struct({ org_id: OrgId, space_id: SpaceId }))

export class WebhookRepo extends Effect.Service<WebhookRepo>()("engram/store/WebhookRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inSpace = (space: SpaceRef) => sql`org_id = ${space.orgId} AND space_id = ${space.spaceId}`
    const columns = sql.literal("webhook_id, space_id, url, event_types, enabled, secret_sealed, created_at, updated_at")
    const deliveryColumns = sql.literal(
      "d.delivery_id, d.webhook_id, d.event_type, d.operation_id, d.url, d.status, d.attempts, d.response_status, d.error, " +
        "d.next_retry_at, d.last_attempt_at, d.created_at"
    )

    return {
      /**
       * A new webhook, unless the space already has `limit` (checked under a
       * lock on the space, so two creations at once cannot both pass).
       * Answers the row, or none when the limit is reached.
       */
      create: (space: SpaceRef, webhook: {
        readonly id: string
        readonly url: string
        readonly eventTypes: ReadonlyArray<string>
        readonly enabled: boolean
        readonly sealed: string
      }, limit: number, now: Date) =>
        Effect.gen(function*() {
          yield* sql`SELECT 1 FROM spaces WHERE ${inSpace(space)} FOR UPDATE`
          const [count] = yield* sql`SELECT count(*) AS n FROM webhooks WHERE ${inSpace(space)}`.pipe(Effect.flatMap(decodeCount))
          if ((count?.n ?? 0) >= limit) return Option.none<WebhookRow>()
          const rows = yield* sql`INSERT INTO webhooks (org_id, space_id, webhook_id, url, event_types, enabled, secret_sealed,
              created_at, updated_at)
            VALUES (${space.orgId}, ${space.spaceId}, ${webhook.id}, ${webhook.url}, ${[...webhook.eventTypes]}, ${webhook.enabled},
              ${webhook.sealed}, ${now}, ${now})
            RETURNING ${columns}`.pipe(Effect.flatMap(decodeWebhooks))
          return Option.fromNullable(rows[0])
        }).pipe(sql.withTransaction, storeFailure, Effect.withSpan("WebhookRepo.create")),

      list: (space: SpaceRef) =>
        sql`SELECT ${columns} FROM webhooks WHERE ${inSpace(space)} ORDER BY created_at, webhook_id`.pipe(
          Effect.flatMap(decodeWebhooks),
          storeFailure
        ),

      find: (space: SpaceRef, webhookId: string) =>
        sql`SELECT ${columns} FROM webhooks WHERE ${inSpace(space)} AND webhook_id = ${webhookId}`.pipe(
          Effect.flatMap(decodeWebhooks),
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        ),

      /** Only the fields given change; answers the webhook as it is now, or none if it does not exist. */
      update: (space: SpaceRef, webhookId: string, patch: WebhookPatch, now: Date) =>
        sql`UPDATE webhooks SET
            url = coalesce(${patch.url ?? null}, url),
            event_types = coalesce(${patch.eventTypes === undefined ? null : [...patch.eventTypes]}::text[], event_types),
            enabled = coalesce(${patch.enabled ?? null}::boolean, enabled),
            updated_at = ${now}
          WHERE ${inSpace(space)} AND webhook_id = ${webhookId}
          RETURNING ${columns}`.pipe(
          Effect.flatMap(decodeWebhooks),
          Effect.map((rows) => Option.fromNullable(rows[0])),
          storeFailure
        ),

      /** Deletes the webhook and its deliveries (queued ones stop); answers whether it existed. */
      remove: (space: SpaceRef, webhookId: string) =>
        sql`DELETE FROM webhooks WHERE ${inSpace(space)} AND webhook_id = ${webhookId} RETURNING webhook_id`.pipe(
          Effect.map((rows) => rows.length > 0),
          storeFailure
        ),

      /** Whether the space has any webhook at all (the writer skips the outbox when it has none). */
      any: (space: SpaceRef) =>
        sql`SELECT count(*) AS n FROM (SELECT 1 FROM webhooks WHERE ${inSpace(space)} LIMIT 1) w`.pipe(
          Effect.flatMap(decodeCount),
          Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
          storeFailure
        ),

      /**
       * The outbox: queues each event for every enabled webhook of the space
       * subscribed to it now, due at once. Runs inside the caller's
       * transaction; answers how many deliveries were queued.
       */
      enqueue: (space: SpaceRef, events: ReadonlyArray<OutboxEvent>, now: Date) =>
        events.length === 0 ? Effect.succeed(0) : sql`INSERT INTO webhook_deliveries (delivery_id, org_id, space_id, webhook_id,
            event_type, operation_id, url, body, status, attempts, next_retry_at, created_at)
          SELECT 'dlv_' || replace(gen_random_uuid()::text, '-', ''), w.org_id, w.space_id, w.webhook_id,
            e.event_type, e.operation_id, w.url, e.body, 'pending', 0, ${now}, ${now}
          FROM webhooks w
          JOIN unnest(${events.map((e) => e.eventType)}::text[], ${events.map((e) => e.operationId)}::text[],
            ${events.map((e) => e.body)}::text[]) WITH ORDINALITY AS e(event_type, operation_id, body, n)
            ON e.event_type = ANY(w.event_types)
          WHERE w.org_id = ${space.orgId} AND w.space_id = ${space.spaceId} AND w.enabled
          ORDER BY e.n, w.created_at
          RETURNING delivery_id`.pipe(Effect.map((rows) => rows.length), storeFailure),

      /**
       * Claims up to `limit` deliveries due by `now` whose webhook is enabled:
       * each becomes `processing` with its attempt counted before it is sent,
       * so a crash mid-attempt is seen as an attempt that got no answer.
       */
      claim: (space: SpaceRef, now: Date, limit: number) =>
        sql`WITH due AS (
            SELECT d.delivery_id FROM webhook_deliveries d
            JOIN webhooks w ON w.org_id = d.org_id AND w.space_id = d.space_id AND w.webhook_id = d.webhook_id
            WHERE d.org_id = ${space.orgId} AND d.space_id = ${space.spaceId} AND d.status = 'pending'
              AND d.next_retry_at <= ${now} AND w.enabled
            ORDER BY d.next_retry_at, d.created_at, d.delivery_id
            LIMIT ${limit}
            FOR UPDATE OF d SKIP LOCKED
          )
          UPDATE webhook_deliveries d SET status = 'processing', attempts = d.attempts + 1, last_attempt_at = ${now},
            url = w.url, next_retry_at = NULL
          FROM due, webhooks w
          WHERE d.delivery_id = due.delivery_id
            AND w.org_id = d.org_id AND w.space_id = d.space_id AND w.webhook_id = d.webhook_id
          RETURNING ${deliveryColumns}, d.body, w.url AS current_url, w.secret_sealed`.pipe(
          Effect.flatMap(decodeClaimed),
          storeFailure
        ),

      /** Deliveries left `processing` (a crash or a lost owner mid-attempt), oldest first. */
      interrupted: (space: SpaceRef) =>
        sql`SELECT ${deliveryColumns} FROM webhook_deliveries d
          WHERE d.org_id = ${space.orgId} AND d.space_id = ${space.spaceId} AND d.status = 'processing'
          ORDER BY d.last_attempt_at`.pipe(Effect.flatMap(decodeDeliveries), storeFailure),

      /** The outcomes of attempts, in one statement. A delivery deleted meanwhile (its webhook went) is left alone. */
      settle: (outcomes: ReadonlyArray<{ readonly deliveryId: string; readonly settlement: Settlement }>) =>
        outcomes.length === 0 ? Effect.void : sql`UPDATE webhook_deliveries d SET status = o.status,
            response_status = o.response_status, error = o.error, next_retry_at = o.next_retry_at
          FROM unnest(${outcomes.map((o) => o.deliveryId)}::text[], ${outcomes.map((o) => o.settlement.status)}::text[],
            ${outcomes.map((o) => o.settlement.responseStatus)}::int[], ${outcomes.map((o) => o.settlement.error)}::text[],
            ${outcomes.map((o) => o.settlement.nextRetryAt?.toISOString() ?? null)}::timestamptz[])
            AS o(delivery_id, status, response_status, error, next_retry_at)
          WHERE d.delivery_id = o.delivery_id AND d.status = 'processing'`.pipe(Effect.asVoid, storeFailure),

      /**
       * When the loop must next look: the space's next pending delivery of an
       * enabled webhook, or when a delivery left processing counts as cut short.
       */
      nextDue: (space: SpaceRef, stuckAfterMs: number) =>
        sql`SELECT min(CASE WHEN d.status = 'pending' THEN d.next_retry_at
              ELSE d.last_attempt_at + make_interval(secs => ${stuckAfterMs / 1000}) END) AS at
          FROM webhook_deliveries d
          JOIN webhooks w ON w.org_id = d.org_id AND w.space_id = d.space_id AND w.webhook_id = d.webhook_id
          WHERE d.org_id = ${space.orgId} AND d.space_id = ${space.spaceId} AND d.status IN ('pending', 'processing')
            AND w.enabled`.pipe(
          Effect.flatMap(decodeDue),
          Effect.map((rows) => Option.fromNullable(rows[0]?.at ?? null)),
          storeFailure
        ),

      /**
       * Spaces with a delivery due by `now`, or one left processing since
       * before `stuckBefore` (its owner died mid-attempt): the waker wakes them.
       */
      spacesWithDue: (now: Date, stuckBefore: Date) =>
        sql`SELECT DISTINCT d.org_id, d.space_id FROM webhook_deliveries d
          JOIN webhooks w ON w.org_id = d.org_id AND w.space_id = d.space_id AND w.webhook_id = d.webhook_id
          WHERE w.enabled AND ((d.status = 'pending' AND d.next_retry_at <= ${now})
            OR (d.status = 'processing' AND d.last_attempt_at <= ${stuckBefore}))`.pipe(
          Effect.flatMap(decodeSpaces),
          Effect.map((rows): ReadonlyArray<SpaceRef> => rows.map((row) => ({ orgId: row.org_id, spaceId: row.space_id }))),
          storeFailure
        ),

      /** A webhook's deliveries, newest first, after the cursor's (created_at, id) when one is given. */
      deliveries: (space: SpaceRef, webhookId: string, limit: number, after: { readonly at: Date; readonly id: string } | null) =>
        sql`SELECT ${deliveryColumns} FROM webhook_deliveries d
          WHERE d.org_id = ${space.orgId} AND d.space_id = ${space.spaceId} AND d.webhook_id = ${webhookId}
            ${after === null ? sql.literal("") : sql`AND (d.created_at, d.delivery_id) < (${after.at}, ${after.id})`}
          ORDER BY d.created_at DESC, d.delivery_id DESC
          LIMIT ${limit}`.pipe(Effect.flatMap(decodeDeliveries), storeFailure)
    }
  })
}) {}
