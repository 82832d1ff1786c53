/**
 * What the main thread and the extraction worker say to each other: a group
 * of writes to extract with the local engine, and each write's memories or
 * why it failed, in the same order. Messages cross a thread boundary, so both
 * ends decode them with these schemas (the worker pool and its runner do).
 */
import { Schema } from "effect"

/** One write to extract. */
export const ExtractionItem = Schema.Struct({
  content: Schema.String,
  eventTime: Schema.DateFromSelf,
  speaker: Schema.NullOr(Schema.String),
  fromAgent: Schema.Boolean,
  scopeIds: Schema.Array(Schema.String),
  guidance: Schema.NullOr(Schema.String),
  /** The space's mode is `verbatim`: the content kept whole. */
  verbatim: Schema.Boolean
})
export type ExtractionItem = typeof ExtractionItem.Type

const ExtractedMemorySchema = Schema.Struct({
  text: Schema.String,
  sourceText: Schema.String,
  type: Schema.Literal("fact", "experience"),
  entities: Schema.Array(Schema.Struct({ name: Schema.String, kind: Schema.Literal("person", "place", "organization", "thing") })),
  occurredStart: Schema.NullOr(Schema.DateFromSelf),
  occurredEnd: Schema.NullOr(Schema.DateFromSelf),
  speaker: Schema.NullOr(Schema.String)
})

export const ExtractionOutcome = Schema.Union(
  Schema.Struct({ ok: Schema.Literal(true), memories: Schema.Array(ExtractedMemorySchema) }),
  Schema.Struct({ ok: Schema.Literal(false), message: Schema.String })
)
export type ExtractionOutcome = typeof ExtractionOutcome.Type

/** A group of writes to extract; each write's memories or why it failed, in the same order. */
export class ExtractGroup extends Schema.TaggedRequest<ExtractGroup>()("ExtractGroup", {
  failure: Schema.Never,
  success: Schema.Array(ExtractionOutcome),
  payload: { items: Schema.Array(ExtractionItem) }
}) {}
