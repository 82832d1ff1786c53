/** `POST /v1/responses`: the responses shape, whole or as numbered `response.*` events. */
import { Effect, Stream } from "effect"
import { randomBase62 } from "../../../services/secrets/Tokens.ts"
import type { ModelUsage, StreamPart } from "../../../services/llm/Provider.ts"
import type { Prepared } from "../MemoryWrapper.ts"
import {
  type Body,
  describeFailure,
  extraFields,
  invalid,
  optionalBoolean,
  optionalInteger,
  optionalModel,
  optionalString,
  optionalTemperature,
  readMessages,
  required,
  safeText,
  sse,
  type WireFormat
} from "./Common.ts"

const KNOWN = ["input", "instructions", "model", "stream", "max_output_tokens", "temperature"]

const usageOf = (usage: ModelUsage) => ({
  input_tokens: usage.input_tokens,
  output_tokens: usage.output_tokens,
  total_tokens: usage.input_tokens + usage.output_tokens
})

const part = (text: string) => ({ type: "output_text", text, annotations: [] })

const message = (id: string, text: string | undefined) => ({
  type: "message",
  id,
  status: text === undefined ? "in_progress" : "completed",
  role: "assistant",
  content: text === undefined ? [] : [part(text)]
})

const response = (
  prepared: Prepared,
  ids: { response: string; message: string; created: number },
  done: { text: string; usage: ModelUsage; stopReason: "stop" | "length" } | undefined
) => ({
  id: ids.response,
  object: "response",
  created_at: ids.created,
  status: done === undefined ? "in_progress" : done.stopReason === "length" ? "incomplete" : "completed",
  ...(done?.stopReason === "length" ? { incomplete_details: { reason: "max_output_tokens" } } : { incomplete_details: null }),
  model: prepared.spec.id,
  output: done === undefined ? [] : [message(ids.message, done.text)],
  output_text: done?.text ?? "",
  usage: done === undefined ? null : usageOf(done.usage),
  memories_injected: prepared.memoriesInjected,
  space_id: prepared.spaceId
})

const newIds = (prepared: Prepared) => ({ response: `resp_${randomBase62(24)}`, message: `msg_${randomBase62(24)}`, created: prepared.createdAt })

export const Responses: WireFormat = {
  parse: (body: Body) =>
    Effect.gen(function*() {
      const input = yield* required(body, "input")
      const read = typeof input === "string"
        ? { system: [] as Array<string>, messages: [{ role: "user" as const, content: yield* safeText("input", input) }] }
        : Array.isArray(input)
        ? yield* readMessages(input, "input")
        : yield* invalid("input", "must be a string or an array of messages")
      const instructions = yield* optionalString(body, "instructions")
      const stream = (yield* optionalBoolean(body, "stream")) ?? false
      return {
        stream,
        includeUsage: true,
        turn: {
          messages: read.messages,
          system: [...(instructions === undefined ? [] : [instructions]), ...read.system].join("\n\n"),
          model: yield* optionalModel(body),
          maxTokens: yield* optionalInteger(body, "max_output_tokens", 1),
          temperature: yield* optionalTemperature(body),
          extra: extraFields(body, KNOWN)
        }
      }
    }),

  respond: (prepared, answer) => response(prepared, newIds(prepared), answer),

  events: (prepared: Prepared, parts: Stream.Stream<StreamPart, unknown>) => {
    const ids = newIds(prepared)
    let sequence = 0
    let text = ""
    const event = (type: string, data: Record<string, unknown>) => sse({ type, sequence_number: sequence++, ...data }, type)
    const where = { item_id: ids.message, output_index: 0, content_index: 0 }
    const opening = Stream.sync(() => [
      event("response.created", { response: response(prepared, ids, undefined) }),
      event("response.in_progress", { response: response(prepared, ids, undefined) }),
      event("response.output_item.added", { output_index: 0, item: message(ids.message, undefined) }),
      event("response.content_part.added", { ...where, part: part("") })
    ]).pipe(Stream.flattenIterables)
    const body = parts.pipe(
      Stream.mapConcat((p) => {
        if (p._tag === "Delta") {
          text += p.text
          return [event("response.output_text.delta", { ...where, delta: p.text, logprobs: [] })]
        }
        const done = { text, usage: p.usage, stopReason: p.stopReason }
        return [
          event("response.output_text.done", { ...where, text, logprobs: [] }),
          event("response.content_part.done", { ...where, part: part(text) }),
          event("response.output_item.done", { output_index: 0, item: message(ids.message, text) }),
          event("response.completed", { response: response(prepared, ids, done) })
        ]
      })
    )
    const ended = body.pipe(Stream.catchAll((error) => Stream.succeed(event("error", { ...describeFailure(error), param: null }))))
    return Stream.concat(opening, ended)
  }
}
