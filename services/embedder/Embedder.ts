/**
 * Text embeddings behind one service: the offline GloVe embedder by default,
 * any OpenAI-compatible `/embeddings` endpoint when configured.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Data, Effect, Layer, Redacted, Schema } from "effect"
import { openGlove } from "./Glove.ts"

export class EmbedderError extends Data.TaggedError("EmbedderError")<{ readonly message: string; readonly cause?: unknown }> {}

export interface EmbedderShape {
  /** Identifies the model and its preprocessing; recorded beside every stored vector. */
  readonly id: string
  readonly dimensions: number
  /** Unit-length vectors, one per text, same order. */
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbedderError>
  /** Unit word vectors, when the embedder has them: recall's soft term matching uses them. */
  readonly wordVectors?: ((word: string) => Float32Array | undefined) | undefined
  /**
   * Present when a text's vector is made from its words alone: `embed([text])[0]`
   * is, exactly, the normalised sum over `words(text)` (src/retrieval/Text.ts),
   * in order, of `weight * vector` of each word that has a part, summed in a
   * Float32Array. Such vectors need not be stored: the index makes them again
   * from the words it keeps.
   */
  readonly wordPart?: ((word: string) => { readonly weight: number; readonly vector: Float32Array } | undefined) | undefined
  /** Reads now what the embedder would read on first use (the word vectors' vocabulary), for a caller with time to spare. */
  readonly load?: (() => void) | undefined
}

export class Embedder extends Context.Tag("engram/embedder/Embedder")<Embedder, EmbedderShape>() {}

/**
 * The vectors a write stores beside its texts (same order): none from an
 * embedder that makes vectors from words alone (`wordPart`), whose vectors
 * the space's index makes again from the words it keeps (400 bytes a memory
 * on disk and the embedding's time saved); the embedder's own otherwise.
 */
export const vectorsToStore = (
  embedder: EmbedderShape,
  texts: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Float32Array | null>, EmbedderError> =>
  embedder.wordPart !== undefined || texts.length === 0 ? Effect.succeed(texts.map(() => null)) : embedder.embed(texts)

export const normalize = (vector: Float32Array) => {
  let norm = 0
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!
  norm = Math.sqrt(norm)
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = vector[i]! / norm
  return vector
}

/**
 * The offline default: SIF-weighted GloVe word vectors (100-d), compacted once
 * (by `npm install`, or into `cacheDir`). The file is checked at start and
 * read on first use.
 */
export const layerLocal = (options: { readonly cacheDir: string }) =>
  Layer.effect(
    Embedder,
    Effect.try({
      try: () => openGlove(options.cacheDir),
      catch: (cause) => new EmbedderError({ message: `cannot load the offline word vectors: ${String(cause)}`, cause })
    }).pipe(
      Effect.map((glove): EmbedderShape => ({
        id: glove.id,
        dimensions: glove.dimensions,
        embed: (texts) => Effect.sync(() => {
          const loaded = glove.load()
          return texts.map((text) => loaded.embed(text))
        }),
        wordVectors: (word) => glove.load().wordVector(word),
        wordPart: (word) => glove.load().wordPart(word),
        load: () => void glove.load()
      })),
      Effect.withSpan("Embedder.openLocal")
    )
  )

const EmbeddingsResponse = Schema.Struct({
  data: Schema.Array(Schema.Struct({ embedding: Schema.Array(Schema.Number), index: Schema.Number }))
})

/** Any OpenAI-compatible embeddings endpoint (vLLM, Ollama, llama.cpp server, hosted APIs). */
export const layerOpenAI = (options: {
  readonly baseUrl: string
  readonly model: string
  readonly apiKey?: Redacted.Redacted | undefined
  readonly dimensions?: number | undefined
}) =>
  Layer.effect(
    Embedder,
    Effect.gen(function*() {
      const client = (yield* HttpClient.HttpClient).pipe(HttpClient.filterStatusOk)
      const url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`
      const batch = (texts: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          let request = HttpClientRequest.post(url)
          if (options.apiKey) request = HttpClientRequest.bearerToken(request, Redacted.value(options.apiKey))
          request = yield* HttpClientRequest.bodyJson(request, {
            model: options.model,
            input: texts,
            ...(options.dimensions ? { dimensions: options.dimensions } : {})
          })
          const response = yield* client.execute(request)
          const body = yield* Schema.decodeUnknown(EmbeddingsResponse)(yield* response.json)
          return [...body.data].sort((a, b) => a.index - b.index).map((d) => normalize(Float32Array.from(d.embedding)))
        }).pipe(
          Effect.scoped,
          Effect.timeout("30 seconds"),
          Effect.retry({ times: 2 }),
          Effect.mapError((cause) => new EmbedderError({ message: `embeddings endpoint ${url} failed: ${String(cause)}`, cause }))
        )
      return {
        id: `openai-compatible:${options.model}`,
        dimensions: options.dimensions ?? 0,
        embed: (texts) =>
          texts.length === 0
            ? Effect.succeed([])
            : Effect.forEach(chunk(texts, 64), batch, { concurrency: 2 }).pipe(Effect.map((parts) => parts.flat()))
      } satisfies EmbedderShape
    })
  )

const chunk = <A>(items: ReadonlyArray<A>, size: number) => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** Deterministic hashed bag-of-words vectors, for tests of code that only needs some embedder. */
export const layerHashing = (dimensions = 64) =>
  Layer.succeed(Embedder, {
    id: `hashing-${dimensions}`,
    dimensions,
    embed: (texts) =>
      Effect.sync(() =>
        texts.map((text) => {
          const vector = new Float32Array(dimensions)
          for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
            let h = 2166136261
            for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619)
            vector[(h >>> 0) % dimensions]! += 1
          }
          return normalize(vector)
        })
      )
  })
