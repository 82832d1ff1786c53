/** `POST /v1/messages`: the messages shape, whole or as `message_start` … `message_stop` events. */
import { Effect, Stream } from "effect"
import { randomBase62 } from "../../../services/secrets/Tokens.ts"
import { estimateTokens, type StopReason, type StreamPart } from "../../../services/llm/Provider.ts"
import type { Prepared } from "../MemoryWrapper.ts"
import {
  type Body,
  describeFailure,
  extraFields,
  invalid,
  optionalBoolean,
  optionalInteger,
  optionalModel,
  optionalTemperature,
  readMessages,
  required,
  sse,
  textOf,
  type WireFormat
} from "./Common.ts"

const KNOWN = ["messages", "system", "model", "stream", "max_tokens", "temperature"]

const stopReason = (stop: StopReason) => (stop === "length" ? "max_tokens" : "end_turn")

export const Messages: WireFormat = {
  parse: (body: Body) =>
    Effect.gen(function*() {
      const { system, messages } = yield* readMessages(yield* required(body, "messages"), "messages")
      yield* required(body, "max_tokens")
      const systemText = yield* textOf(body.system, "system")
      const temperature = yield* optionalTemperature(body)
      if (temperature !== undefined && temperature > 1) return yield* invalid("temperature", "must be a number from 0 to 1")
      return {
        stream: (yield* optionalBoolean(body, "stream")) ?? false,
        includeUsage: true,
        turn: {
          messages,
          system: [systemText, ...system].filter((s) => s !== "").join("\n\n"),
          model: yield* optionalModel(body),
          maxTokens: yield* optionalInteger(body, "max_tokens", 1),
          temperature,
          extra: extraFields(body, KNOWN)
        }
      }
    }),

  respond: (prepared, answer) => ({
    id: `msg_${randomBase62(24)}`,
    type: "message",
    role: "assistant",
    content: [{ type: "text", text: answer.text }],
    model: prepared.spec.id,
    stop_reason: stopReason(answer.stopReason),
    stop_sequence: null,
    usage: { input_tokens: answer.usage.input_tokens, output_tokens: answer.usage.output_tokens },
    memories_injected: prepared.memoriesInjected,
    space_id: prepared.spaceId
  }),

  events: (prepared: Prepared, parts: Stream.Stream<StreamPart, unknown>) => {
    const event = (type: string, data: Record<string, unknown>) => sse({ type, ...data }, type)
    const start = event("message_start", {
      message: {
        id: `msg_${randomBase62(24)}`,
        type: "message",
        role: "assistant",
        content: [],
        model: prepared.spec.id,
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: estimateTokens(prepared.request.system), output_tokens: 0 },
        memories_injected: prepared.memoriesInjected,
        space_id: prepared.spaceId
      }
    })
    const opening = [start, event("content_block_start", { index: 0, content_block: { type: "text", text: "" } })]
    const body = parts.pipe(
      Stream.mapConcat((p) =>
        p._tag === "Delta"
          ? [event("content_block_delta", { index: 0, delta: { type: "text_delta", text: p.text } })]
          : [
            event("content_block_stop", { index: 0 }),
            event("message_delta", {
              delta: { stop_reason: stopReason(p.stopReason), stop_sequence: null },
              usage: { output_tokens: p.usage.output_tokens }
            }),
            event("message_stop", {})
          ]
      )
    )
    const ended = body.pipe(
      Stream.catchAll((error) => {
        const failure = describeFailure(error)
        return Stream.succeed(event("error", { error: { type: failure.code === "model_throttled" ? "overloaded_error" : "api_error", message: failure.message } }))
      })
    )
    return Stream.concat(Stream.fromIterable(opening), ended)
  }
}
