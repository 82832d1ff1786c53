/**
 * What the webhook endpoints do: check the URL (HTTPS, public), keep the
 * secret sealed, hold a space to five webhooks, and page through deliveries.
 * Definitions live in the store; edits apply at once because every attempt
 * reads its webhook as it is then.
 */
import { Clock, Effect, Either, Option, Schema } from "effect"
import { InvalidWebhookUrl, NoFields, NotFound, UnknownEventType, ValidationError, WebhookLimitReached } from "../domain/Errors.ts"
import type { PrincipalShape } from "../domain/Principal.ts"
import {
  type CreateWebhookRequest,
  type Delivery,
  EVENT_TYPES,
  type PatchWebhookRequest,
  type Webhook,
  WEBHOOKS_PER_SPACE
} from "../domain/Webhooks.ts"
import { randomBase62 } from "../../services/secrets/Tokens.ts"
import { type DeliveryRow, WebhookRepo, type WebhookRow } from "../../services/store/WebhookRepo.ts"
import { newWebhookSecret, WebhookSecrets } from "../../services/webhooks/Signing.ts"
import { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { spaceRef } from "../domain/Ids.ts"
import { Spaces } from "../spaces/Spaces.ts"

export const toWebhook = (row: WebhookRow, secret: string | null = null): Webhook => ({
  id: row.webhook_id,
  space_id: row.space_id,
  url: row.url,
  event_types: [...row.event_types],
  enabled: row.enabled,
  secret,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString()
})

export const toDelivery = (row: DeliveryRow): Delivery => ({
  id: row.delivery_id,
  event_type: row.event_type,
  url: row.url,
  status: row.status,
  attempts: row.attempts,
  response_status: row.response_status,
  error: row.error,
  next_retry_at: row.next_retry_at?.toISOString() ?? null,
  last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString()
})

/** The cursor of a deliveries page: where the last item of the previous page stood. */
const Cursor = Schema.compose(Schema.StringFromBase64Url, Schema.parseJson(Schema.Tuple(Schema.DateFromString, Schema.String)))
const encodeCursor = Schema.encodeSync(Cursor)
const decodeCursor = Schema.decodeUnknownEither(Cursor)

const known = new Set<string>(EVENT_TYPES)

export class Webhooks extends Effect.Service<Webhooks>()("engram/webhooks/Webhooks", {
  dependencies: [Spaces.Default, WebhookRepo.Default],
  effect: Effect.gen(function*() {
    const spaces = yield* Spaces
    const repo = yield* WebhookRepo
    const secrets = yield* WebhookSecrets
    const transport = yield* WebhookTransport

    const space = (principal: PrincipalShape, spaceId: string) =>
      spaces.get(principal, spaceId).pipe(Effect.as(spaceRef(principal, spaceId)))

    const checkUrl = (url: string) =>
      transport.check(url).pipe(Effect.mapError((refused) => new InvalidWebhookUrl({ message: refused.message })))

    const checkEvents = (eventTypes: ReadonlyArray<string>) => {
      const unknown = eventTypes.filter((e) => !known.has(e))
      return unknown.length === 0
        ? Effect.succeed([...new Set(eventTypes)])
        : Effect.fail(new UnknownEventType({
          message: `event_types: unknown ${unknown.map((e) => JSON.stringify(e)).join(", ")}; known: ${EVENT_TYPES.join(", ")}`
        }))
    }

    const missing = (webhookId: string) => new NotFound({ message: `webhook ${webhookId} not found` })

    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const create = Effect.fn("Webhooks.create")(function*(principal: PrincipalShape, spaceId: string, request: CreateWebhookRequest) {
      const ref = yield* space(principal, spaceId)
      const eventTypes = yield* checkEvents(request.event_types ?? ["memory.created"])
      yield* checkUrl(request.url)
      const secret = newWebhookSecret()
      const id = `wh_${randomBase62(20)}`
      const created = yield* repo.create(ref, {
        id,
        url: request.url,
        eventTypes,
        enabled: request.enabled ?? true,
        sealed: secrets.seal(secret)
      }, WEBHOOKS_PER_SPACE, yield* now)
      if (Option.isNone(created)) {
        return yield* new WebhookLimitReached({ message: `a space has at most ${WEBHOOKS_PER_SPACE} webhooks; delete one first` })
      }
      yield* Effect.annotateCurrentSpan({ webhook_id: id })
      return toWebhook(created.value, secret)
    })

    const list = Effect.fn("Webhooks.list")(function*(principal: PrincipalShape, spaceId: string) {
      const ref = yield* space(principal, spaceId)
      return { items: (yield* repo.list(ref)).map((row) => toWebhook(row)) }
    })

    const update = Effect.fn("Webhooks.update")(
      function*(principal: PrincipalShape, spaceId: string, webhookId: string, request: PatchWebhookRequest) {
        const ref = yield* space(principal, spaceId)
        if (request.url === undefined && request.event_types === undefined && request.enabled === undefined) {
          return yield* new NoFields({ message: "no fields to change: send url, event_types or enabled" })
        }
        if (Option.isNone(yield* repo.find(ref, webhookId))) return yield* missing(webhookId)
        const eventTypes = request.event_types === undefined ? undefined : yield* checkEvents(request.event_types)
        if (request.url !== undefined) yield* checkUrl(request.url)
        const updated = yield* repo.update(ref, webhookId, { url: request.url, eventTypes, enabled: request.enabled }, yield* now)
        if (Option.isNone(updated)) return yield* missing(webhookId)
        return toWebhook(updated.value)
      }
    )

    const remove = Effect.fn("Webhooks.delete")(function*(principal: PrincipalShape, spaceId: string, webhookId: string) {
      const ref = yield* space(principal, spaceId)
      if (!(yield* repo.remove(ref, webhookId))) return yield* missing(webhookId)
    })

    const deliveries = Effect.fn("Webhooks.deliveries")(
      function*(principal: PrincipalShape, spaceId: string, webhookId: string, query: { readonly limit: number; readonly cursor?: string | undefined }) {
        const ref = yield* space(principal, spaceId)
        if (Option.isNone(yield* repo.find(ref, webhookId))) return yield* missing(webhookId)
        let after: { at: Date; id: string } | null = null
        if (query.cursor !== undefined) {
          const decoded = decodeCursor(query.cursor)
          if (Either.isLeft(decoded)) return yield* new ValidationError({ message: "cursor: not a cursor this endpoint returned" })
          after = { at: decoded.right[0], id: decoded.right[1] }
        }
        // One more than asked tells whether another page follows.
        const rows = yield* repo.deliveries(ref, webhookId, query.limit + 1, after)
        const page = rows.slice(0, query.limit)
        const last = page[page.length - 1]
        return {
          items: page.map(toDelivery),
          next_cursor: rows.length > query.limit && last ? encodeCursor([last.created_at, last.delivery_id]) : null
        }
      }
    )

    return { create, list, update, remove, deliveries }
  })
}) {}
