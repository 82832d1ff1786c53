import { describe, expect, it } from "@effect/vitest"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Redacted } from "effect"
import { createServer } from "node:http"
import { Embedder, layerLocal, layerOpenAI } from "../../services/embedder/Embedder.ts"

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0)

describe("offline embedder (GloVe)", () => {
  it.effect("unit vectors; related sentences are closer than unrelated ones", () =>
    Effect.gen(function*() {
      const embedder = yield* Embedder
      const [a, b, c] = yield* embedder.embed([
        "Caroline went to the LGBTQ support group",
        "she attended a meeting for transgender people",
        "the stock market fell sharply"
      ])
      expect(embedder.dimensions).toBe(100)
      expect(Math.abs(dot(a!, a!) - 1)).toBeLessThan(1e-5)
      expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!))
    }).pipe(Effect.provide(layerLocal({ cacheDir: process.env.ENGRAM_TEST_MODELS_DIR! }))))
})

describe("OpenAI-compatible embedder", () => {
  it.live("posts the model and inputs with the key, and normalises the vectors in input order", () =>
    Effect.gen(function*() {
      const seen: Array<{ auth: string | undefined; body: any }> = []
      const server = createServer((req, res) => {
        let raw = ""
        req.on("data", (d) => (raw += d))
        req.on("end", () => {
          const body = JSON.parse(raw)
          seen.push({ auth: req.headers.authorization, body })
          const data = (body.input as Array<string>).map((text, index) => ({ index, embedding: [1, text.length, 0, 0] })).reverse()
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data }))
        })
      })
      yield* Effect.promise(() => new Promise<void>((r) => server.listen(0, "127.0.0.1", r)))
      yield* Effect.addFinalizer(() => Effect.promise(() => new Promise((r) => server.close(r))))
      const port = (server.address() as { port: number }).port
      const layer = layerOpenAI({ baseUrl: `http://127.0.0.1:${port}/v1`, model: "embed-small", apiKey: Redacted.make("sk-test") }).pipe(
        Layer.provide(NodeHttpClient.layerUndici)
      )
      const vectors = yield* Effect.flatMap(Embedder, (e) => e.embed(["ab", "abcd"])).pipe(Effect.provide(layer))
      expect(seen[0]!.auth).toBe("Bearer sk-test")
      expect(seen[0]!.body).toEqual({ model: "embed-small", input: ["ab", "abcd"] })
      expect(vectors).toHaveLength(2)
      expect(vectors[0]![1]).toBeCloseTo(2 / Math.sqrt(5), 5) // "ab", though the server answered it second
      expect(vectors[1]![1]).toBeCloseTo(4 / Math.sqrt(17), 5)
    }).pipe(Effect.scoped))

  it.live("a failing endpoint is an EmbedderError, not a crash", () =>
    Effect.gen(function*() {
      const layer = layerOpenAI({ baseUrl: "http://127.0.0.1:1/v1", model: "m" }).pipe(Layer.provide(NodeHttpClient.layerUndici))
      const error = yield* Effect.flip(Effect.flatMap(Embedder, (e) => e.embed(["x"])).pipe(Effect.provide(layer)))
      expect(error._tag).toBe("EmbedderError")
      expect(error.message).toContain("127.0.0.1:1")
    }))
})
