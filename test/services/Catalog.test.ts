import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Catalog, type CatalogFile, layerFile, LOCAL_MODEL_ID, makeCatalog } from "../../services/llm/Catalog.ts"

const model = (id: string, extra: Record<string, unknown> = {}) =>
  ({
    id,
    provider: "openai",
    base_url: "http://127.0.0.1:1/v1/",
    credits_per_1k_input: 1,
    credits_per_1k_output: 3,
    requests_per_minute: 60,
    aliases: [],
    timeout_seconds: 60,
    max_retries: 2,
    ...extra
  }) as CatalogFile["models"][number]

describe("model catalog", () => {
  it.effect("without a file: only the local engine, default and both tiers", () =>
    Effect.gen(function*() {
      const catalog = yield* makeCatalog(undefined, {})
      expect(catalog.entries).toHaveLength(1)
      expect(catalog.entries[0]).toMatchObject({ id: LOCAL_MODEL_ID, short_name: "local", alias: "balanced", default: true, relative_cost: 1 })
      for (const name of ["local", LOCAL_MODEL_ID, "fast", "balanced"]) expect(Option.getOrThrow(catalog.resolve(name)).id).toBe(LOCAL_MODEL_ID)
      expect(Option.isNone(catalog.resolve("gpt-4"))).toBe(true)
    }))

  it.effect("resolves full id, pinned short name and re-pointable tiers; cheapest first; one default", () =>
    Effect.gen(function*() {
      const catalog = yield* makeCatalog({
        models: [
          model("acme/big-2", { short_name: "big", credits_per_1k_input: 10, credits_per_1k_output: 30, aliases: ["balanced"], api_key_env: "ACME_KEY" }),
          model("acme/small-1", { short_name: "small", aliases: ["fast"] })
        ]
      }, { ACME_KEY: "sk-test" })
      expect(catalog.entries.map((e) => e.id)).toEqual([LOCAL_MODEL_ID, "acme/small-1", "acme/big-2"])
      expect(catalog.entries.filter((e) => e.default).map((e) => e.id)).toEqual(["acme/big-2"])
      expect(catalog.defaultModel.id).toBe("acme/big-2")
      expect(Option.getOrThrow(catalog.resolve("fast")).id).toBe("acme/small-1")
      expect(Option.getOrThrow(catalog.resolve("big")).id).toBe("acme/big-2")
      expect(Option.getOrThrow(catalog.resolve("acme/small-1")).baseUrl).toBe("http://127.0.0.1:1/v1")
      const big = catalog.entries.find((e) => e.id === "acme/big-2")!
      expect(big.relative_cost).toBe(1)
      expect(catalog.entries.find((e) => e.id === "acme/small-1")!.relative_cost).toBe(0.1)
      expect(catalog.entries.find((e) => e.id === LOCAL_MODEL_ID)!.alias).toBeNull()
      expect(catalog.served).toContain("fast -> small")
    }))

  it.effect("refuses what would make a name ambiguous or a credential missing", () =>
    Effect.gen(function*() {
      const failures = [
        { models: [model("a/x", { short_name: "x" }), model("b/x", { short_name: "x" })] },
        { models: [model("a/x", { aliases: ["fast"] }), model("b/y", { aliases: ["fast"] })] },
        { models: [model("a/x", { short_name: "balanced" })] },
        { models: [model("a/x", { short_name: "local" })] },
        { models: [model("a/x", { api_key_env: "NOT_SET_ANYWHERE" })] }
      ]
      for (const file of failures) {
        const result = yield* Effect.either(makeCatalog(file, {}))
        expect(Either.isLeft(result), JSON.stringify(file)).toBe(true)
      }
    }))

  it.effect("MODELS_CONFIG: an invalid file stops start-up with a message naming it", () =>
    Effect.gen(function*() {
      const path = join(tmpdir(), `engram-models-${process.pid}.json`)
      writeFileSync(path, JSON.stringify({ models: [{ id: "a/x", provider: "mystery", base_url: "http://x" }] }))
      const failed = yield* Effect.either(Effect.provide(Catalog, layerFile(Option.some(path))))
      expect(Either.isLeft(failed) && failed.left.message).toContain("MODELS_CONFIG")
      writeFileSync(path, JSON.stringify({ models: [model("a/x", { short_name: "x" })] }))
      const loaded = yield* Effect.provide(Catalog, layerFile(Option.some(path)))
      expect(loaded.entries.map((e) => e.short_name)).toEqual(["local", "x"])
      writeFileSync(path, "{ not json")
      expect(Either.isLeft(yield* Effect.either(Effect.provide(Catalog, layerFile(Option.some(path)))))).toBe(true)
    }))
})
