/**
 * The model catalog: the operator's file (MODELS_CONFIG) plus the built-in
 * local engine, which is always served. Names resolve as a full id, then a
 * short name (pinned), then a tier (`fast`, `balanced`; re-pointable). The
 * default is whatever `balanced` points at. Nothing is ever substituted.
 */
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { readFileSync } from "node:fs"
import type { CatalogEntry } from "../../src/domain/Models.ts"

export const TIERS = ["balanced", "fast"] as const
export type Tier = (typeof TIERS)[number]

const NonEmpty = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
const Rate = Schema.Number.pipe(Schema.nonNegative())

/** One model of the operator's file. */
export const ModelConfig = Schema.Struct({
  id: NonEmpty,
  provider: Schema.Literal("openai", "anthropic"),
  base_url: NonEmpty,
  upstream_model: Schema.optional(NonEmpty),
  api_key_env: Schema.optional(NonEmpty),
  short_name: Schema.optional(NonEmpty),
  display_name: Schema.optional(NonEmpty),
  owned_by: Schema.optional(NonEmpty),
  credits_per_1k_input: Rate,
  credits_per_1k_output: Rate,
  requests_per_minute: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 1_000_000)), { default: () => 60 }),
  aliases: Schema.optionalWith(Schema.Array(Schema.Literal(...TIERS)), { default: () => [] }),
  created: Schema.optional(Schema.Int),
  timeout_seconds: Schema.optionalWith(Schema.Number.pipe(Schema.between(1, 600)), { default: () => 60 }),
  max_retries: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 5)), { default: () => 2 })
}).annotations({ parseOptions: { onExcessProperty: "error" } })

export const CatalogFile = Schema.Struct({ models: Schema.Array(ModelConfig) }).annotations({
  parseOptions: { onExcessProperty: "error" }
})
export type CatalogFile = typeof CatalogFile.Type

export interface ModelSpec {
  readonly id: string
  readonly provider: "openai" | "anthropic" | "local"
  readonly baseUrl: string
  readonly upstreamModel: string
  readonly apiKey: Option.Option<Redacted.Redacted>
  readonly shortName: string
  readonly displayName: string
  readonly ownedBy: string
  readonly inputRate: number
  readonly outputRate: number
  readonly requestsPerMinute: number
  readonly tiers: ReadonlyArray<Tier>
  readonly created: number
  readonly timeoutMs: number
  readonly maxRetries: number
}

/** The built-in engine: no LLM, answers extractively from recalled memories. Always served. */
export const LOCAL_MODEL_ID = "engram/local-extractive-1"
const local: ModelSpec = {
  id: LOCAL_MODEL_ID,
  provider: "local",
  baseUrl: "",
  upstreamModel: LOCAL_MODEL_ID,
  apiKey: Option.none(),
  shortName: "local",
  displayName: "Engram local engine (extractive, no LLM: quotes the recalled memories that bear on the question)",
  ownedBy: "engram",
  inputRate: 0.01,
  outputRate: 0.01,
  requestsPerMinute: 6000,
  tiers: [],
  created: 1767225600,
  timeoutMs: 30_000,
  maxRetries: 0
}

export class CatalogError extends Schema.TaggedError<CatalogError>()("CatalogError", { message: Schema.String }) {}

export interface CatalogShape {
  /** Cheapest first. */
  readonly models: ReadonlyArray<ModelSpec>
  readonly defaultModel: ModelSpec
  /** Full id, then short name, then tier. */
  readonly resolve: (name: string) => Option.Option<ModelSpec>
  readonly entries: ReadonlyArray<CatalogEntry>
  /** For error messages: every name a caller may send. */
  readonly served: string
}

export class Catalog extends Context.Tag("engram/llm/Catalog")<Catalog, CatalogShape>() {}

const cost = (m: ModelSpec) => m.inputRate + m.outputRate
const round = (x: number) => Math.round(x * 1000) / 1000

/** Builds the catalog from the operator's file (or none) and the environment holding credentials. */
export const makeCatalog = (
  file: CatalogFile | undefined,
  env: Record<string, string | undefined>
): Effect.Effect<CatalogShape, CatalogError> =>
  Effect.gen(function*() {
    const configured: Array<ModelSpec> = []
    for (const m of file?.models ?? []) {
      let apiKey = Option.none<Redacted.Redacted>()
      if (m.api_key_env !== undefined) {
        const value = env[m.api_key_env]
        if (value === undefined || value.trim() === "") {
          return yield* new CatalogError({ message: `model ${m.id}: its credential variable ${m.api_key_env} is not set` })
        }
        apiKey = Option.some(Redacted.make(value))
      }
      configured.push({
        id: m.id,
        provider: m.provider,
        baseUrl: m.base_url.replace(/\/+$/, ""),
        upstreamModel: m.upstream_model ?? m.id,
        apiKey,
        shortName: m.short_name ?? m.id,
        displayName: m.display_name ?? m.short_name ?? m.id,
        ownedBy: m.owned_by ?? m.provider,
        inputRate: m.credits_per_1k_input,
        outputRate: m.credits_per_1k_output,
        requestsPerMinute: m.requests_per_minute,
        tiers: m.aliases,
        created: m.created ?? 0,
        timeoutMs: m.timeout_seconds * 1000,
        maxRetries: m.max_retries
      })
    }
    const names = new Map<string, string>()
    for (const m of [local, ...configured]) {
      for (const name of new Set([m.id, m.shortName])) {
        const holder = names.get(name)
        if (holder !== undefined) return yield* new CatalogError({ message: `the name ${name} is used by both ${holder} and ${m.id}` })
        if ((TIERS as ReadonlyArray<string>).includes(name)) {
          return yield* new CatalogError({ message: `model ${m.id}: ${name} is a tier name, not an id or short name` })
        }
        names.set(name, m.id)
      }
    }
    const tierOwner = new Map<Tier, ModelSpec>()
    for (const m of configured) {
      for (const tier of m.tiers) {
        const holder = tierOwner.get(tier)
        if (holder !== undefined) return yield* new CatalogError({ message: `the tier ${tier} is claimed by both ${holder.id} and ${m.id}` })
        tierOwner.set(tier, m)
      }
    }
    // Unclaimed tiers point at the local engine, so `balanced` (the default) always resolves.
    const localTiers = TIERS.filter((t) => !tierOwner.has(t))
    const all = [{ ...local, tiers: localTiers }, ...configured]
    for (const t of localTiers) tierOwner.set(t, all[0]!)
    const models = all.sort((a, b) => cost(a) - cost(b) || a.id.localeCompare(b.id))
    const defaultModel = tierOwner.get("balanced")!
    const byName = new Map<string, ModelSpec>()
    for (const m of models) byName.set(m.shortName, m)
    for (const m of models) byName.set(m.id, m)
    const resolve = (name: string) => {
      const named = byName.get(name)
      if (named !== undefined) return Option.some(named)
      const tier = TIERS.find((t) => t === name)
      return tier === undefined ? Option.none() : Option.some(tierOwner.get(tier)!)
    }
    const entries = models.map((m): CatalogEntry => ({
      id: m.id,
      object: "model",
      created: m.created,
      owned_by: m.ownedBy,
      short_name: m.shortName,
      display_name: m.displayName,
      alias: TIERS.find((t) => tierOwner.get(t) === m) ?? null,
      default: m === defaultModel,
      credits_per_1k_input: m.inputRate,
      credits_per_1k_output: m.outputRate,
      requests_per_minute: m.requestsPerMinute,
      relative_cost: cost(defaultModel) === 0 ? (cost(m) === 0 ? 1 : 0) : round(cost(m) / cost(defaultModel))
    }))
    const served = [
      ...models.map((m) => (m.shortName === m.id ? m.id : `${m.shortName} (${m.id})`)),
      ...TIERS.map((t) => `${t} -> ${tierOwner.get(t)!.shortName}`)
    ].join(", ")
    return { models, defaultModel, resolve, entries, served }
  })

/** Reads MODELS_CONFIG (a JSON file) when set; a missing, unreadable or invalid file stops start-up. */
export const layerFile = (path: Option.Option<string>) =>
  Layer.effect(
    Catalog,
    Effect.gen(function*() {
      if (Option.isNone(path)) return yield* makeCatalog(undefined, process.env)
      const raw = yield* Effect.try({
        try: () => JSON.parse(readFileSync(path.value, "utf8")) as unknown,
        catch: (e) => new CatalogError({ message: `MODELS_CONFIG ${path.value}: ${(e as Error).message}` })
      })
      const file = yield* Schema.decodeUnknown(CatalogFile)(raw, { errors: "all" }).pipe(
        Effect.mapError((e) => new CatalogError({ message: `MODELS_CONFIG ${path.value}: ${e.message}` }))
      )
      return yield* makeCatalog(file, process.env).pipe(
        Effect.mapError((e) => new CatalogError({ message: `MODELS_CONFIG ${path.value}: ${e.message}` }))
      )
    })
  )

/** A catalog of exactly these models, for tests. */
export const layerStatic = (file: CatalogFile | undefined, env: Record<string, string | undefined> = {}) =>
  Layer.effect(Catalog, makeCatalog(file, env))
