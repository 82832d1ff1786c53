/** Memories and writes: the wire shapes of record, batch, the legacy add, jobs, and the memory list. */
import { Schema } from "effect"
import { jsonBytes, jsonValueProblem, SafeString } from "./SafeText.ts"
import { SpaceId } from "./Spaces.ts"
import { Page, Paged, strict } from "./Strict.ts"

export const MemoryType = Schema.Literal("fact", "note", "experience", "summary")
export type MemoryType = typeof MemoryType.Type

/**
 * `active` memories are recalled; `retired` ones are kept (and listed with
 * state=retired) but never recalled; `question` is a written turn that only
 * asks ("What is Marta allergic to?"): it states nothing, so it is kept and
 * listed (state=question) but never recalled, consolidated or modelled.
 */
export const MemoryState = Schema.Literal("active", "retired", "question")
export type MemoryState = typeof MemoryState.Type

/** What an edit may set: retire a memory, or make it (a retired one, or a question) active. */
export const SettableState = Schema.Literal("active", "retired")

/** An ISO 8601 timestamp; anything else is a 422. */
export const Timestamp = SafeString.pipe(
  Schema.filter((s) => /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: () => "must be an ISO 8601 timestamp"
  })
)

export const Tag = SafeString.pipe(
  Schema.minLength(1),
  Schema.maxLength(100),
  Schema.filter((t) => !t.toLowerCase().startsWith("svc:"), { message: () => "tags starting with svc: are reserved" })
)

export const ScopeId = SafeString.pipe(Schema.minLength(1), Schema.maxLength(256))
export const DocumentId = SafeString.pipe(Schema.minLength(1), Schema.maxLength(256))

/** Metadata as stored and answered. */
export const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Metadata a request may carry: at most this deep (the object itself is level 1) ... */
export const METADATA_MAX_DEPTH = 32
/** ... and at most this many bytes serialized as JSON (UTF-8), per item. */
export const METADATA_MAX_BYTES = 65_536

/** Metadata on a write or an edit: safe keys and strings at every level, bounded depth and size. */
export const MetadataInput = Metadata.pipe(
  Schema.filter((metadata) => {
    const problem = jsonValueProblem(metadata, METADATA_MAX_DEPTH)
    if (problem !== undefined) return problem
    return jsonBytes(metadata) <= METADATA_MAX_BYTES || `must be at most ${METADATA_MAX_BYTES} bytes as JSON`
  }, { jsonSchema: {} })
)

/** Memory text as written: 1 to 100,000 characters. */
export const Content = SafeString.pipe(Schema.minLength(1), Schema.maxLength(100_000))
/** Free-form context kept beside a memory. */
export const Context = SafeString.pipe(Schema.maxLength(2000))

const writeFields = {
  content: Content,
  document_id: Schema.optional(DocumentId),
  timestamp: Schema.optional(Timestamp),
  user_id: Schema.optional(ScopeId),
  agent_id: Schema.optional(ScopeId),
  session_id: Schema.optional(ScopeId),
  metadata: Schema.optional(MetadataInput),
  tags: Schema.optional(Schema.Array(Tag).pipe(Schema.maxItems(50))),
  context: Schema.optional(Context)
}

export const RecordItem = strict(Schema.Struct(writeFields))
export type RecordItem = typeof RecordItem.Type

export const RecordRequest = strict(Schema.Struct({ space_id: SpaceId, async: Schema.optional(Schema.Boolean), ...writeFields }))
export type RecordRequest = typeof RecordRequest.Type

export const BatchRequest = strict(Schema.Struct({
  space_id: SpaceId,
  items: Schema.Array(RecordItem).pipe(Schema.minItems(1), Schema.maxItems(100))
}))
export type BatchRequest = typeof BatchRequest.Type

export const Usage = Schema.Struct({ input_tokens: Schema.Number, output_tokens: Schema.Number })

export const StoredMemory = Schema.Struct({
  memory_id: Schema.String,
  content: Schema.String,
  memory_type: MemoryType,
  entities: Schema.Array(Schema.String),
  occurred_start: Schema.NullOr(Schema.String),
  occurred_end: Schema.NullOr(Schema.String),
  /** `question` for a turn that only asks: stored and listed, never recalled (docs/api.md). */
  state: MemoryState,
  created_at: Schema.String
})

export const RecordResponse = Schema.Struct({
  space_id: Schema.String,
  document_id: Schema.String,
  status: Schema.Literal("completed"),
  memories: Schema.Array(StoredMemory),
  usage: Usage
})

export const Queued = Schema.Struct({
  job_id: Schema.String,
  space_id: Schema.String,
  status: Schema.Literal("queued"),
  items: Schema.Number
})

export const LegacyAddRequest = strict(Schema.Struct({
  space_id: SpaceId,
  content: Content,
  context: Schema.optional(Context),
  timestamp: Schema.optional(Timestamp),
  metadata: Schema.optional(MetadataInput)
}))

export const LegacyAddResponse = Schema.Struct({
  memory_id: Schema.String,
  status: Schema.Literal("completed", "skipped"),
  usage: Usage
})

export const JobStatus = Schema.Literal("queued", "processing", "completed", "failed", "cancelled")

/** A document job's file and progress: `stage` queued, parsing, storing, completed or failed; `done` of `total` units. */
export const JobDocument = Schema.Struct({
  document_id: Schema.String,
  filename: Schema.String,
  size: Schema.Number,
  format: Schema.NullOr(Schema.String),
  stage: Schema.Literal("queued", "parsing", "storing", "completed", "failed", "cancelled"),
  unit: Schema.NullOr(Schema.String),
  done: Schema.Number,
  total: Schema.NullOr(Schema.Number)
})

export const Job = Schema.Struct({
  job_id: Schema.String,
  space_id: Schema.String,
  status: JobStatus,
  items: Schema.Struct({
    total: Schema.Number,
    queued: Schema.Number,
    completed: Schema.Number,
    failed: Schema.Number,
    cancelled: Schema.Number
  }),
  memory_ids: Schema.Array(Schema.String),
  error: Schema.NullOr(Schema.String),
  /** Document jobs only: the uploaded file and how far its parsing has come. */
  document: Schema.optional(JobDocument),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Job = typeof Job.Type

/** A memory as listed (`GET .../memories`): the spec's list item plus its state, tags and times. */
export const MemoryItem = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  context: Schema.String,
  date: Schema.String,
  type: MemoryType,
  state: MemoryState,
  entities: Schema.Array(Schema.String),
  metadata: Metadata,
  tags: Schema.Array(Schema.String),
  source_ids: Schema.Array(Schema.String),
  document_id: Schema.String,
  user_id: Schema.NullOr(Schema.String),
  agent_id: Schema.NullOr(Schema.String),
  session_id: Schema.NullOr(Schema.String),
  member_id: Schema.NullOr(Schema.String),
  occurred_start: Schema.NullOr(Schema.String),
  occurred_end: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})
export type MemoryItem = typeof MemoryItem.Type

export const MemoryList = Paged(MemoryItem)

const BooleanFromString = Schema.Literal("true", "false").pipe(
  Schema.transform(Schema.Boolean, { strict: true, decode: (s) => s === "true", encode: (b) => (b ? "true" : "false") })
)

/** At most this many tags in a list filter (the most a memory carries). */
export const MAX_FILTER_TAGS = 50

/**
 * A query string's tag filter, `tags=a,b`: comma-separated, each tag trimmed
 * and checked like a written one, empty pieces skipped. Decoded into the tags.
 */
export const TagFilter = Schema.transform(
  SafeString.pipe(Schema.maxLength(MAX_FILTER_TAGS * 101)),
  Schema.Array(Tag).pipe(
    Schema.minItems(1, { message: () => "must name at least one tag" }),
    Schema.maxItems(MAX_FILTER_TAGS, { message: () => `must name at most ${MAX_FILTER_TAGS} tags` })
  ),
  {
    strict: true,
    decode: (s) => s.split(",").map((t) => t.trim()).filter((t) => t !== ""),
    encode: (tags) => tags.join(",")
  }
)

/** Memory ids a list may be narrowed to at most (one page of the list). */
export const MAX_FILTER_IDS = 100

/**
 * A query string's id filter, `ids=mem_a,mem_b`: comma-separated, each id
 * trimmed, empty pieces skipped. The list narrowed to these memories is how
 * a caller reads memories it knows by id (there is no single-memory GET).
 */
export const IdFilter = Schema.transform(
  SafeString.pipe(Schema.maxLength(MAX_FILTER_IDS * 257)),
  Schema.Array(SafeString.pipe(Schema.minLength(1), Schema.maxLength(256))).pipe(
    Schema.minItems(1, { message: () => "must name at least one memory id" }),
    Schema.maxItems(MAX_FILTER_IDS, { message: () => `must name at most ${MAX_FILTER_IDS} memory ids` })
  ),
  {
    strict: true,
    decode: (s) => s.split(",").map((id) => id.trim()).filter((id) => id !== ""),
    encode: (ids) => ids.join(",")
  }
)

export const MemoryListQuery = Schema.Struct({
  ...Page(100, 1000).fields,
  q: Schema.optional(SafeString.pipe(Schema.maxLength(10_000))),
  type: Schema.optional(MemoryType),
  /** Memories carrying any of these tags. */
  tags: Schema.optional(TagFilter),
  /** Only these memories (by id). */
  ids: Schema.optional(IdFilter),
  state: Schema.optional(Schema.Literal("active", "retired", "question", "all")),
  user_id: Schema.optional(ScopeId),
  agent_id: Schema.optional(ScopeId),
  session_id: Schema.optional(ScopeId),
  document_id: Schema.optional(DocumentId),
  prefer_observations: Schema.optional(BooleanFromString)
})
export type MemoryListQuery = typeof MemoryListQuery.Type

export const PatchMemoryRequest = strict(Schema.Struct({
  text: Schema.optional(Content),
  context: Schema.optional(Context),
  metadata: Schema.optional(MetadataInput),
  tags: Schema.optional(Schema.Array(Tag).pipe(Schema.maxItems(50))),
  state: Schema.optional(SettableState)
}))
export type PatchMemoryRequest = typeof PatchMemoryRequest.Type

export const HistoryEntry = Schema.Struct({
  change: Schema.Literal("created", "edited", "retired", "restored"),
  changed_at: Schema.String,
  previous: Schema.NullOr(Schema.Struct({
    text: Schema.String,
    context: Schema.String,
    metadata: Metadata,
    tags: Schema.Array(Schema.String),
    state: MemoryState
  }))
})

export const MemoryHistory = Schema.Struct({
  memory_id: Schema.String,
  entries: Schema.Array(HistoryEntry),
  total: Schema.Number
})

export const TagsMatch = Schema.Literal("any", "all", "any_strict", "all_strict", "exact")
export type TagsMatch = typeof TagsMatch.Type

/**
 * The order of a rendered block's lines: by relevance (default), or `stable`
 * (by when each memory was stored), which lets consecutive blocks share a
 * longer start for a provider's prompt cache. Selection is by relevance either way.
 */
export const BlockOrder = Schema.Literal("relevance", "stable")
export type BlockOrder = typeof BlockOrder.Type

export const RetrieveRequest = strict(Schema.Struct({
  space_id: SpaceId,
  query: SafeString.pipe(Schema.minLength(1), Schema.maxLength(10_000)),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  top_k: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  memory_type: Schema.optional(Schema.Array(MemoryType)),
  user_id: Schema.optional(ScopeId),
  agent_id: Schema.optional(ScopeId),
  session_id: Schema.optional(ScopeId),
  tags: Schema.optional(Schema.Array(SafeString.pipe(Schema.minLength(1), Schema.maxLength(100)))),
  tags_match: Schema.optional(TagsMatch),
  min_score: Schema.optional(Schema.Number),
  prefer_observations: Schema.optional(Schema.Boolean),
  as_of: Schema.optional(Timestamp),
  query_timestamp: Schema.optional(Timestamp),
  mode: Schema.optional(Schema.Literal("accurate", "fast")),
  format: Schema.optional(Schema.Literal("results", "block")),
  context_max_tokens: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  block_order: Schema.optional(BlockOrder),
  receipt: Schema.optional(Schema.Boolean),
  receipt_detail: Schema.optional(Schema.Literal("basic", "full"))
}))
export type RetrieveRequest = typeof RetrieveRequest.Type

export const RetrieveItem = Schema.Struct({
  memory_id: Schema.String,
  content: Schema.String,
  relevance_score: Schema.NullOr(Schema.Number),
  memory_type: MemoryType,
  entities: Schema.Array(Schema.String),
  occurred_start: Schema.NullOr(Schema.String),
  occurred_end: Schema.NullOr(Schema.String),
  metadata: Metadata,
  created_at: Schema.String
})
export type RetrieveItem = typeof RetrieveItem.Type

export const RetrieveResponse = Schema.Struct({
  results: Schema.Array(RetrieveItem),
  usage: Schema.Struct({ input_tokens: Schema.Number }),
  context: Schema.optional(Schema.String),
  token_estimate: Schema.optional(Schema.Number),
  receipt_id: Schema.optional(Schema.String)
})

export const SearchRequest = strict(Schema.Struct({
  space_id: SpaceId,
  query: SafeString.pipe(Schema.minLength(1), Schema.maxLength(10_000)),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
  filters: Schema.optional(Schema.Struct({
    type: Schema.optional(Schema.Union(MemoryType, Schema.Array(MemoryType))),
    user_id: Schema.optional(ScopeId),
    agent_id: Schema.optional(ScopeId),
    session_id: Schema.optional(ScopeId)
  }))
}))

export const SearchResponse = Schema.Struct({
  results: Schema.Array(Schema.Struct({
    memory_id: Schema.String,
    content: Schema.String,
    relevance_score: Schema.Number,
    memory_type: MemoryType,
    metadata: Metadata,
    created_at: Schema.String
  })),
  usage: Schema.Struct({ input_tokens: Schema.Number })
})

export const ReceiptExclusion = Schema.Struct({ memory_id: Schema.String, reason: Schema.String, detail: Schema.String })

export const Receipt = Schema.Struct({
  request_id: Schema.String,
  space_id: Schema.String,
  included: Schema.Array(Schema.Struct({
    memory_id: Schema.String,
    relevance_score: Schema.Number,
    token_estimate: Schema.Number,
    /** The space's flag rules that matched the memory when it was stored (only when some did). */
    flags: Schema.optional(Schema.Array(Schema.String))
  })),
  excluded: Schema.Array(ReceiptExclusion),
  excluded_truncated: Schema.Record({ key: Schema.String, value: Schema.Number }),
  token_accounting: Schema.Struct({
    block_tokens: Schema.optional(Schema.Number),
    budget: Schema.optional(Schema.NullOr(Schema.Number))
  }),
  engine_stages: Schema.Boolean
})
export type Receipt = typeof Receipt.Type

export const Explanation = Schema.Struct({
  request_id: Schema.String,
  memory_id: Schema.String,
  outcome: Schema.Literal("included", "excluded", "not_considered"),
  rank: Schema.NullOr(Schema.Number),
  relevance_score: Schema.NullOr(Schema.Number),
  reason: Schema.NullOr(Schema.String),
  detail: Schema.NullOr(Schema.String)
})
