/**
 * The models: the offline extractor always, the offline embedder unless
 * EMBEDDINGS_BASE_URL names an OpenAI-compatible endpoint, and the model
 * catalog (MODELS_CONFIG plus the built-in local engine).
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"
import * as Extraction from "../src/ingestion/Extractor.ts"
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

export const Extractor = Extraction.layerLocal

/** MODELS_CONFIG's catalog plus the built-in engine; an invalid file stops start-up naming it. */
export const Catalog = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Catalogs.layerFile(config.modelsConfig).pipe(Layer.mapError((e) => new StartupError({ message: e.message }))))
)

export const Models = Layer.mergeAll(Embedder, Extractor, Catalog)
