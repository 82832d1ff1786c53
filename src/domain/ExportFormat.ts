/**
 * The export file of a space (NDJSON, `engram.space-export` version 1): a
 * header line, one line per memory (notes are memories of type `note`), per
 * document, per memory model, per user profile and per settings document,
 * and an end line counting them, so a file cut short is refused. The same
 * schemas write a file and read it back, so an export imports as it was.
 * docs/api.md ("Exports and imports") describes every field.
 */
import { Schema } from "effect"
import { ChatSettingsValues } from "./ChatSettings.ts"
import { ExtractionSettingsValues } from "./ExtractionSettings.ts"
import { MemoryState, MemoryType } from "./Memories.ts"
import { TriggerMemoryType } from "./MemoryModels.ts"
import { StoredSpaceProfile } from "./Profiles.ts"
import { jsonValueProblem, SafeString } from "./SafeText.ts"

export const FORMAT = "engram.space-export"
export const FORMAT_VERSION = 1

/** The longest line an import reads (a memory with a long history, a model refreshed many times). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024

const Id = SafeString.pipe(Schema.minLength(1), Schema.maxLength(256))
const Text = SafeString
const Scope = Schema.NullOr(SafeString.pipe(Schema.maxLength(256)))
const Count = Schema.Int.pipe(Schema.nonNegative())

/** A JSON object whose strings (and keys) are storable, nested at most 32 levels. */
export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((value) => jsonValueProblem(value, 32) ?? true)
)

/** A vector as little-endian float32 bytes, in base64. */
export const Base64Vector = Schema.String.pipe(
  Schema.filter((s) => (/^[A-Za-z0-9+/]*={0,2}$/.test(s) && Buffer.from(s, "base64").length % 4 === 0) || "must be base64 of float32 values")
)

const strictStruct = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct(fields).annotations({ parseOptions: { onExcessProperty: "error" } })

export const Header = strictStruct({
  kind: Schema.Literal("header"),
  format: Schema.Literal(FORMAT),
  version: Schema.Literal(FORMAT_VERSION),
  space_id: Id,
  exported_at: Schema.Date,
  /** The embedding model of the server that wrote the file. */
  embedding_model: Text
})
export type Header = typeof Header.Type

/** What a memory said before a change (`previous` of an `edited`, `retired` or `restored` entry). */
export const PreviousVersion = strictStruct({
  text: Text,
  context: Text,
  metadata: JsonObject,
  tags: Schema.Array(Text),
  state: MemoryState
})

export const HistoryEntry = strictStruct({
  change: Schema.Literal("created", "edited", "retired", "restored"),
  previous: Schema.NullOr(PreviousVersion),
  changed_at: Schema.Date
})
export type HistoryEntry = typeof HistoryEntry.Type

export const MemoryLine = strictStruct({
  kind: Schema.Literal("memory"),
  id: Id,
  document_id: Id,
  type: MemoryType,
  state: MemoryState,
  text: Text,
  source_text: Text,
  context: Text,
  entities: Schema.Array(strictStruct({ name: Text, kind: Text })),
  metadata: JsonObject,
  tags: Schema.Array(Text),
  user_id: Scope,
  agent_id: Scope,
  session_id: Scope,
  member_id: Scope,
  event_time: Schema.Date,
  occurred_start: Schema.NullOr(Schema.Date),
  occurred_end: Schema.NullOr(Schema.Date),
  source_ids: Schema.Array(Id),
  position: Count,
  consolidated_at: Schema.NullOr(Schema.Date),
  superseded_by: Schema.NullOr(Id),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  /** The model that made `embedding` (null when the memory has no vector). */
  embedding_model: Schema.NullOr(Text),
  embedding: Schema.NullOr(Base64Vector),
  /** Oldest first. */
  history: Schema.Array(HistoryEntry)
})
export type MemoryLine = typeof MemoryLine.Type

export const DocumentLine = strictStruct({
  kind: Schema.Literal("document"),
  document_id: Id,
  source: Schema.Literal("file", "custom", "memory"),
  filename: Schema.NullOr(Text),
  text_length: Count,
  tags: Schema.Array(Text),
  created_at: Schema.Date,
  updated_at: Schema.Date
})
export type DocumentLine = typeof DocumentLine.Type

export const ModelLine = strictStruct({
  kind: Schema.Literal("memory_model"),
  model_id: Id,
  name: Text,
  query: Text,
  content: Schema.NullOr(Text),
  tags: Schema.Array(Text),
  max_tokens: Count,
  trigger_mode: Schema.Literal("full", "delta"),
  refresh_on_new: Schema.Boolean,
  trigger_types: Schema.NullOr(Schema.Array(TriggerMemoryType)),
  last_refreshed_at: Schema.NullOr(Schema.Date),
  refreshed_query: Schema.NullOr(Text),
  stale: Schema.Boolean,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  /** Earlier contents, oldest first. */
  history: Schema.Array(strictStruct({ previous_content: Text, changed_at: Schema.Date }))
})
export type ModelLine = typeof ModelLine.Type

/** What the space holds about one user_id: derived from the memories, so an import reads it and stores nothing. */
export const UserProfileLine = strictStruct({
  kind: Schema.Literal("user_profile"),
  user_id: Id,
  memory_count: Count,
  first_seen: Schema.Date,
  last_active: Schema.Date
})
export type UserProfileLine = typeof UserProfileLine.Type

const settings = <K extends string, V extends Schema.Schema.Any>(setting: K, value: V) =>
  strictStruct({ kind: Schema.Literal("settings"), setting: Schema.Literal(setting), value, updated_at: Schema.Date })

/** A settings document of the space: its profile, chat, reason or extraction settings. */
export const SettingsLine = Schema.Union(
  settings("profile", StoredSpaceProfile),
  settings("chat", ChatSettingsValues),
  settings("reason", Schema.Struct({ model: Text })),
  settings("extraction", ExtractionSettingsValues)
)
export type SettingsLine = typeof SettingsLine.Type

export const Counts = strictStruct({
  memories: Count,
  documents: Count,
  memory_models: Count,
  user_profiles: Count,
  settings: Count
})
export type Counts = typeof Counts.Type

export const EndLine = strictStruct({ kind: Schema.Literal("end"), counts: Counts })
export type EndLine = typeof EndLine.Type

export type Line = Header | MemoryLine | DocumentLine | ModelLine | UserProfileLine | SettingsLine | EndLine

/** Each kind of line with its schema; a line names its kind first so its errors name the right fields. */
export const LINE_SCHEMAS = {
  header: Header,
  memory: MemoryLine,
  document: DocumentLine,
  memory_model: ModelLine,
  user_profile: UserProfileLine,
  settings: SettingsLine,
  end: EndLine
} as const
export type LineKind = keyof typeof LINE_SCHEMAS
