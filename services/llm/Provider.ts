/**
 * What every model provider implements: one completion, whole or streamed.
 * The request is provider-neutral; `extra` carries the caller's unknown
 * request fields, forwarded to the provider unchanged.
 */
import { Data, type Effect, type Stream } from "effect"
import type { ModelSpec } from "./Catalog.ts"

export interface ChatMessage {
  readonly role: "user" | "assistant"
  readonly content: string
}

export interface ChatRequest {
  /** The system prompt, memory block included. */
  readonly system: string
  readonly messages: ReadonlyArray<ChatMessage>
  /** The recalled memories, best first: the local engine answers from these. */
  readonly memories: ReadonlyArray<string>
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  readonly extra: Readonly<Record<string, unknown>>
}

export interface ModelUsage {
  readonly input_tokens: number
  readonly output_tokens: number
}

export type StopReason = "stop" | "length"

export interface Completion {
  readonly text: string
  readonly usage: ModelUsage
  readonly stopReason: StopReason
}

export type StreamPart =
  | { readonly _tag: "Delta"; readonly text: string }
  | { readonly _tag: "Done"; readonly usage: ModelUsage; readonly stopReason: StopReason }

/** A provider's failure: its HTTP status when it answered, and whether another attempt may succeed. */
export class UpstreamError extends Data.TaggedError("UpstreamError")<{
  readonly message: string
  readonly status: number | undefined
  readonly retryable: boolean
}> {}

export interface Provider {
  readonly complete: (spec: ModelSpec, request: ChatRequest) => Effect.Effect<Completion, UpstreamError>
  /** The effect fails before any token (status, connection); the stream may fail later. */
  readonly stream: (spec: ModelSpec, request: ChatRequest) => Effect.Effect<Stream.Stream<StreamPart, UpstreamError>, UpstreamError>
}

export const estimateTokens = (text: string) => Math.ceil(text.length / 4)

export const retryableStatus = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500
