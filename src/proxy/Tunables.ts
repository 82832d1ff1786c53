/**
 * The proxy's memory tunables: a body field wins over its `X-Svc-*` header,
 * then the space's chat settings, then the platform default. A header that
 * does not parse is a 400 `invalid_tunable` naming it; a body field of the
 * wrong type or range is a 422 `validation_error` naming it.
 */
import { Effect, Either, Schema } from "effect"
import { type ChatSettingsValues, MemoryLimit, MemoryTokenBudget } from "../domain/ChatSettings.ts"
import { InvalidTunable, ValidationError } from "../domain/Errors.ts"
import { type BlockOrder, BlockOrder as BlockOrderSchema, ScopeId } from "../domain/Memories.ts"
import { SpaceId } from "../domain/Spaces.ts"

export const DEFAULT_SPACE = "default"
export const DEFAULT_MEMORY_LIMIT = 5

interface Tunable<A> {
  readonly field: string
  readonly header: string
  readonly schema: Schema.Schema<A>
  /** How the header's text becomes a value for the schema. */
  readonly fromHeader: (raw: string) => unknown
}

const asInteger = (raw: string) => (/^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw)
const asBoolean = (raw: string) => {
  const value = raw.trim().toLowerCase()
  return value === "true" || value === "1" ? true : value === "false" || value === "0" ? false : raw
}
const asText = (raw: string) => raw.trim()

const tunables = {
  space_id: { field: "space_id", header: "x-svc-space-id", schema: SpaceId, fromHeader: asText },
  user_id: { field: "user_id", header: "x-svc-user-id", schema: ScopeId, fromHeader: asText },
  agent_id: { field: "agent_id", header: "x-svc-agent-id", schema: ScopeId, fromHeader: asText },
  session_id: { field: "session_id", header: "x-svc-session-id", schema: ScopeId, fromHeader: asText },
  memory_limit: { field: "memory_limit", header: "x-svc-memory-limit", schema: MemoryLimit, fromHeader: asInteger },
  memory_token_budget: { field: "memory_token_budget", header: "x-svc-memory-tokens", schema: MemoryTokenBudget, fromHeader: asInteger },
  auto_record: { field: "auto_record", header: "x-svc-auto-record", schema: Schema.Boolean, fromHeader: asBoolean },
  memory: { field: "memory", header: "x-svc-memory", schema: Schema.Boolean, fromHeader: asBoolean },
  block_order: { field: "block_order", header: "x-svc-block-order", schema: BlockOrderSchema, fromHeader: asText }
} satisfies Record<string, Tunable<any>>

export const TUNABLE_FIELDS: ReadonlySet<string> = new Set(Object.keys(tunables))

/** The header name as documented, for messages: `x-svc-memory-limit` -> `X-Svc-Memory-Limit`. */
const headerName = (header: string) => header.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase())

/** What the request itself says (body over header); undefined where it says nothing. */
export interface Requested {
  readonly space_id?: string | undefined
  readonly user_id?: string | undefined
  readonly agent_id?: string | undefined
  readonly session_id?: string | undefined
  readonly memory_limit?: number | undefined
  readonly memory_token_budget?: number | undefined
  readonly auto_record?: boolean | undefined
  readonly memory?: boolean | undefined
  readonly block_order?: BlockOrder | undefined
}

/**
 * Every `X-Svc-*` header sent must parse, even where the body sets the same
 * tunable (the body still wins). Messages name the field or header and the
 * rule, never the value sent.
 */
export const readTunables = (body: Record<string, unknown>, headers: Readonly<Record<string, string | undefined>>) =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const [name, tunable] of Object.entries(tunables) as Array<[keyof typeof tunables, Tunable<unknown>]>) {
      const decode = Schema.decodeUnknownEither(tunable.schema)
      const raw = headers[tunable.header]
      if (raw !== undefined) {
        const value = decode(tunable.fromHeader(raw))
        if (Either.isLeft(value)) {
          return yield* new InvalidTunable({ message: `header ${headerName(tunable.header)}: ${describe(name)}` })
        }
        out[name] = value.right
      }
      if (body[name] !== undefined && body[name] !== null) {
        const value = decode(body[name])
        if (Either.isLeft(value)) return yield* new ValidationError({ message: `${name}: ${describe(name)}` })
        out[name] = value.right
      }
    }
    return out as Requested
  })

const describe = (name: keyof typeof tunables) => {
  switch (name) {
    case "memory_limit":
      return "must be an integer from 1 to 20"
    case "memory_token_budget":
      return "must be a positive integer"
    case "auto_record":
    case "memory":
      return "must be true or false"
    case "block_order":
      return "must be relevance or stable"
    case "space_id":
      return "must be 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit"
    default:
      return "must be a string of 1 to 256 characters, without NUL characters or unpaired surrogates"
  }
}

export interface Resolved {
  readonly spaceId: string
  readonly userId: string | null
  readonly agentId: string | null
  readonly sessionId: string | null
  readonly memoryLimit: number
  readonly memoryTokenBudget: number | undefined
  readonly autoRecord: boolean
  readonly memory: boolean
  readonly blockOrder: BlockOrder
}

/** The space a turn goes to: the one it names, or the organization's own `default`. */
export const spaceOf = (requested: Requested) => requested.space_id ?? DEFAULT_SPACE

/** Request, then the space's settings, then the platform default. */
export const resolveTunables = (requested: Requested, settings: ChatSettingsValues): Resolved => ({
  spaceId: spaceOf(requested),
  userId: requested.user_id ?? null,
  agentId: requested.agent_id ?? null,
  sessionId: requested.session_id ?? null,
  memoryLimit: requested.memory_limit ?? settings.memory_limit ?? DEFAULT_MEMORY_LIMIT,
  memoryTokenBudget: requested.memory_token_budget ?? settings.memory_token_budget ?? undefined,
  autoRecord: requested.auto_record ?? settings.auto_record ?? true,
  memory: requested.memory ?? settings.memory ?? true,
  blockOrder: requested.block_order ?? "relevance"
})
