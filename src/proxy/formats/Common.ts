/** Reading the proxy's loosely typed bodies: the documented 400/422 for what is missing or malformed. */
import { Effect } from "effect"
import { BadRequest, ValidationError } from "../../domain/Errors.ts"
import { isSafeText, UNSAFE_TEXT_MESSAGE } from "../../domain/SafeText.ts"
import type { ChatMessage, ModelUsage, StopReason, StreamPart } from "../../../services/llm/Provider.ts"
import type { Prepared, ProxyTurn } from "../MemoryWrapper.ts"
import type { Stream } from "effect"
import { TUNABLE_FIELDS } from "../Tunables.ts"

export type Body = Record<string, unknown>

export interface Parsed {
  readonly turn: Omit<ProxyTurn, "tunables">
  readonly stream: boolean
  readonly includeUsage: boolean
}

/** A wire format: how its body becomes a turn, and how the answer goes back. */
export interface WireFormat {
  readonly parse: (body: Body) => Effect.Effect<Parsed, BadRequest | ValidationError>
  readonly respond: (prepared: Prepared, answer: { text: string; usage: ModelUsage; stopReason: StopReason }) => unknown
  /** Server-sent events, already framed. */
  readonly events: (prepared: Prepared, parts: Stream.Stream<StreamPart, unknown>, includeUsage: boolean) => Stream.Stream<string, unknown>
}

export const invalid = (field: string, rule: string) => new ValidationError({ message: `${field}: ${rule}` })

/** The API's one string rule (`SafeText`): a turn's text is recalled with and stored. */
export const safeText = (field: string, text: string): Effect.Effect<string, ValidationError> =>
  isSafeText(text) ? Effect.succeed(text) : Effect.fail(invalid(field, UNSAFE_TEXT_MESSAGE))

export const optionalString = (body: Body, field: string): Effect.Effect<string | undefined, ValidationError> => {
  const value = body[field]
  if (value === undefined || value === null) return Effect.succeed(undefined)
  return typeof value === "string" ? safeText(field, value) : Effect.fail(invalid(field, "must be a string"))
}

/** A model name as everywhere else: 1 to 200 characters. */
export const optionalModel = (body: Body): Effect.Effect<string | undefined, ValidationError> =>
  Effect.flatMap(optionalString(body, "model"), (model) =>
    model === undefined || (model.length >= 1 && model.length <= 200)
      ? Effect.succeed(model)
      : Effect.fail(invalid("model", "must be a model name of 1 to 200 characters")))

export const optionalBoolean = (body: Body, field: string) =>
  body[field] === undefined || body[field] === null
    ? Effect.succeed(undefined)
    : typeof body[field] === "boolean"
    ? Effect.succeed(body[field] as boolean)
    : Effect.fail(invalid(field, "must be true or false"))

export const optionalInteger = (body: Body, field: string, min: number) =>
  body[field] === undefined || body[field] === null
    ? Effect.succeed(undefined)
    : Number.isInteger(body[field]) && (body[field] as number) >= min
    ? Effect.succeed(body[field] as number)
    : Effect.fail(invalid(field, `must be an integer of at least ${min}`))

export const optionalTemperature = (body: Body): Effect.Effect<number | undefined, ValidationError> =>
  body.temperature === undefined || body.temperature === null
    ? Effect.succeed(undefined)
    : typeof body.temperature === "number" && body.temperature >= 0 && body.temperature <= 2
    ? Effect.succeed(body.temperature)
    : Effect.fail(invalid("temperature", "must be a number from 0 to 2"))

export const required = (body: Body, field: string) =>
  body[field] === undefined || body[field] === null
    ? Effect.fail(new BadRequest({ message: `${field}: is missing` }))
    : Effect.succeed(body[field])

/** Text of a content value: a string, or typed parts of which only those carrying text are kept. */
export const textOf = (content: unknown, field: string): Effect.Effect<string, ValidationError> => {
  if (typeof content === "string") return safeText(field, content)
  if (content === null || content === undefined) return Effect.succeed("")
  if (!Array.isArray(content)) return Effect.fail(invalid(field, "must be a string or an array of content parts"))
  const texts: Array<string> = []
  for (const part of content) {
    if (typeof part === "string") texts.push(part)
    else if (part !== null && typeof part === "object" && "text" in part && typeof part.text === "string") texts.push(part.text)
  }
  return safeText(field, texts.join("\n"))
}

/** Role-tagged messages: system and developer text joins the system prompt; tool traffic is skipped. */
export const readMessages = (items: unknown, field: string) =>
  Effect.gen(function*() {
    if (!Array.isArray(items)) return yield* invalid(field, "must be an array")
    const system: Array<string> = []
    const messages: Array<ChatMessage> = []
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as Body
      if (item === null || typeof item !== "object") return yield* invalid(`${field}.${i}`, "must be an object")
      if (item.type !== undefined && item.type !== "message") continue
      if (typeof item.role !== "string") return yield* invalid(`${field}.${i}.role`, "must be a string")
      const text = yield* textOf(item.content, `${field}.${i}.content`)
      if (item.role === "system" || item.role === "developer") system.push(text)
      else if (item.role === "user" || item.role === "assistant") messages.push({ role: item.role, content: text })
    }
    return { system, messages }
  })

/** The body's fields that no format knows and no tunable names: forwarded to the provider unchanged. */
export const extraFields = (body: Body, known: ReadonlyArray<string>) => {
  const skip = new Set(known)
  const extra: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) if (!skip.has(key) && !TUNABLE_FIELDS.has(key)) extra[key] = value
  return extra
}

export const sse = (data: unknown, event?: string) => `${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`

/** A failure after the first token, as the code and message the stream's last event carries. */
export const describeFailure = (error: unknown) => {
  const e = error as { code?: unknown; message?: unknown }
  return typeof e?.code === "string" && typeof e.message === "string"
    ? { code: e.code, message: e.message }
    : { code: "model_unavailable", message: "the model stopped answering" }
}
