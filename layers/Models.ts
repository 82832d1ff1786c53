/**
 * The models: the offline extractor unless EXTRACTION_MODEL names a catalog
 * model, the offline embedder unless EMBEDDINGS_BASE_URL names an
 * OpenAI-compatible endpoint, and the model catalog (MODELS_CONFIG plus the
 * built-in local engine).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"
import * as Consolidation from "../src/consolidation/Consolidator.ts"
import * as LlmConsolidation from "../src/consolidation/LlmConsolidator.ts"
import * as Extraction from "../src/ingestion/Extractor.ts"
import * as LlmExtraction from "../src/ingestion/LlmExtractor.ts"
import { LanguageModels } from "../src/models/LanguageModels.ts"
import * as Embedding from "../services/embedder/Embedder.ts"
import * as Catalogs from "../services/llm/Catalog.ts"
import { StartupError } from "./StartupError.ts"

export const Embedder = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.embeddings, {
      onNone: () => Embedding.layerLocal({ cacheDir: config.modelsDir }),
      onSome: (remote) =>
        Embedding.layerOpenAI({
          baseUrl: remote.baseUrl,
          model: remote.model,
          apiKey: Option.getOrUndefined(remote.apiKey)
        }).pipe(Layer.provide(NodeHttpClient.layerUndici))
    }))
)

/** MODELS_CONFIG's catalog plus the built-in engine; an invalid file stops start-up naming it. */
export const Catalog = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Catalogs.layerFile(config.modelsConfig).pipe(Layer.mapError((e) => new StartupError({ message: e.message }))))
)

/**
 * Catalog model calls (they need the Cache), on a real HTTP client in every
 * profile: the test server's client only reaches the test server. One
 * instance serves the application and the extractor.
 */
export const Llm = LanguageModels.Default.pipe(Layer.provide(NodeHttpClient.layerUndici))

/**
 * The local engine, unless EXTRACTION_MODEL names a catalog model (the local
 * engine's own names mean the local engine); a name the catalog does not
 * serve stops start-up naming the variable.
 */
export const Extractor = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { extractionModel } = yield* AppConfig
    if (Option.isNone(extractionModel)) return Extraction.layerLocal
    const catalog = yield* Catalogs.Catalog
    const spec = catalog.resolve(extractionModel.value)
    if (Option.isNone(spec)) {
      return yield* new StartupError({
        message: `EXTRACTION_MODEL ${extractionModel.value} is not a served model; served: ${catalog.served}`
      })
    }
    return spec.value.provider === "local" ? Extraction.layerLocal : LlmExtraction.layer(spec.value).pipe(Layer.provide(Llm))
  })
)

/**
 * The offline consolidation engine, unless CONSOLIDATION_MODEL names a catalog
 * model (`local` names the offline engine); a name the catalog does not serve
 * stops start-up naming the variable.
 */
export const Consolidator = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { consolidationModel } = yield* AppConfig
    if (Option.isNone(consolidationModel)) return Consolidation.layerOffline
    const catalog = yield* Catalogs.Catalog
    const spec = catalog.resolve(consolidationModel.value)
    if (Option.isNone(spec)) {
      return yield* new StartupError({
        message: `CONSOLIDATION_MODEL ${consolidationModel.value} is not a served model; served: ${catalog.served}`
      })
    }
    return spec.value.provider === "local" ? Consolidation.layerOffline : LlmConsolidation.layer(spec.value).pipe(Layer.provide(Llm))
  })
)

/** The embedder, the extractor, the consolidator and the language models over a catalog (a test may give its own). */
export const modelsOn = <E, R>(catalog: Layer.Layer<Catalogs.Catalog, E, R>) =>
  Layer.mergeAll(Embedder, Extractor, Consolidator, Llm).pipe(Layer.provideMerge(catalog))

/** What every profile runs its models on: the embedder, the extractor, the catalog and the language models. */
export const Models = modelsOn(Catalog)

export type ModelServices = Layer.Layer.Success<typeof Models>
