/**
 * The models: the offline extractor always (an LLM extractor arrives with the
 * model catalog), and the offline embedder unless EMBEDDINGS_BASE_URL names an
 * OpenAI-compatible endpoint.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../src/config/AppConfig.ts"
import * as Extraction from "../src/ingestion/Extractor.ts"
import * as Embedding from "../services/embedder/Embedder.ts"

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

export const Models = Layer.mergeAll(Embedder, Extractor)
