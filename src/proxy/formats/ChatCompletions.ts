/** `POST /v1/chat/completions`: the chat-completions shape, whole or as `chat.completion.chunk` events ending `[DONE]`. */
import { Effect, Stream } from "effect"
import { randomBase62 } from "../../../services/secrets/Tokens.ts"
import type { StreamPart } from "../../../services/llm/Provider.ts"
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
  type WireFormat
} from "./Common.ts"

const KNOWN = ["messages", "model", "stream", "stream_options", "max_tokens", "temperature"]

const finish = (stop: "stop" | "length") => stop

export const ChatCompletions: WireFormat = {
  parse: (body: Body) =>
    Effect.gen(function*() {
      const { system, messages } = yield* readMessages(yield* required(body, "messages"), "messages")
      const stream = (yield* optionalBoolean(body, "stream")) ?? false
      const options = body.stream_options
      if (options !== undefined && options !== null && (typeof options !== "object" || Array.isArray(options))) {
        return yield* invalid("stream_options", "must be an object")
      }
      return {
        stream,
        includeUsage: stream && (options as Body | undefined)?.include_usage === true,
        turn: {
          messages,
          system: system.join("\n\n"),
          model: yield* optionalModel(body),
          maxTokens: yield* optionalInteger(body, "max_tokens", 1),
          temperature: yield* optionalTemperature(body),
          extra: extraFields(body, KNOWN)
        }
      }
    }),

  respond: (prepared, answer) => ({
    id: `chatcmpl-${randomBase62(24)}`,
    object: "chat.completion",
    created: prepared.createdAt,
    model: prepared.spec.id,
    choices: [{ index: 0, message: { role: "assistant", content: answer.text }, logprobs: null, finish_reason: finish(answer.stopReason) }],
    usage: {
      prompt_tokens: answer.usage.input_tokens,
      completion_tokens: answer.usage.output_tokens,
      total_tokens: answer.usage.input_tokens + answer.usage.output_tokens
    },
    memories_injected: prepared.memoriesInjected,
    space_id: prepared.spaceId
  }),

  events: (prepared: Prepared, parts: Stream.Stream<StreamPart, unknown>, includeUsage: boolean) => {
    const id = `chatcmpl-${randomBase62(24)}`
    const created = prepared.createdAt
    const chunk = (choices: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) =>
      sse({
        id,
        object: "chat.completion.chunk",
        created,
        model: prepared.spec.id,
        choices,
        ...(includeUsage ? { usage: null } : {}),
        ...extra
      })
    const first = chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }], {
      memories_injected: prepared.memoriesInjected,
      space_id: prepared.spaceId
    })
    const body = parts.pipe(
      Stream.mapConcat((part) => {
        if (part._tag === "Delta") return [chunk([{ index: 0, delta: { content: part.text }, logprobs: null, finish_reason: null }])]
        const last = [chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finish(part.stopReason) }])]
        if (includeUsage) {
          last.push(chunk([], {
            usage: {
              prompt_tokens: part.usage.input_tokens,
              completion_tokens: part.usage.output_tokens,
              total_tokens: part.usage.input_tokens + part.usage.output_tokens
            }
          }))
        }
        return last
      })
    )
    // A failure mid-stream ends it early with an error chunk (and no [DONE]), which clients raise as an error.
    const ended = Stream.concat(body, Stream.succeed("data: [DONE]\n\n")).pipe(
      Stream.catchAll((error) => Stream.succeed(sse({ error: describeFailure(error) })))
    )
    return Stream.concat(Stream.succeed(first), ended)
  }
}
