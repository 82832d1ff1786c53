/**
 * A stand-in for a hosted model (the one boundary the tests cannot reach): an
 * OpenAI-compatible chat-completions server on a random port that records what
 * it is sent, and a node whose catalog serves it beside the local engine.
 *   echo  (acme/echo-large-2, the `balanced` tier, so the default): answers `answer <n>`, usage 120 in / 9 out
 *   busy  (acme/busy-1): always 429;  down (acme/down-1): always 503
 */
import type { Vitest } from "@effect/vitest"
import type { HttpClient, HttpServer } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Catalogs from "../../services/llm/Catalog.ts"
import type { Infrastructure } from "./Profiles.ts"
import { eachProfile } from "./Suite.ts"

export interface RecordedCall {
  readonly model: string
  readonly system: string
  readonly user: string
  readonly body: any
}

export interface FakeModelShape {
  readonly port: number
  readonly calls: Array<RecordedCall>
}

export class FakeModel extends Context.Tag("test/FakeModel")<FakeModel, FakeModelShape>() {}

export const USAGE = { prompt_tokens: 120, completion_tokens: 9 }

const start = Effect.acquireRelease(
  Effect.async<{ readonly server: Server; readonly fake: FakeModelShape }>((resume) => {
    const calls: Array<RecordedCall> = []
    const server = createServer((req, res) => {
      let raw = ""
      req.on("data", (chunk) => (raw += chunk))
      req.on("end", () => {
        const body = JSON.parse(raw || "{}")
        const messages: Array<{ role: string; content: string }> = body.messages ?? []
        calls.push({
          model: body.model,
          system: messages.find((m) => m.role === "system")?.content ?? "",
          user: [...messages].reverse().find((m) => m.role === "user")?.content ?? "",
          body
        })
        const reply = (status: number, payload: unknown) => {
          res.writeHead(status, { "content-type": "application/json" })
          res.end(JSON.stringify(payload))
        }
        if (body.model === "busy") return reply(429, { error: { message: "slow down" } })
        if (body.model === "down") return reply(503, { error: { message: "overloaded" } })
        reply(200, {
          id: `chatcmpl-${calls.length}`,
          object: "chat.completion",
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: `answer ${calls.length}` }, finish_reason: "stop" }],
          usage: { ...USAGE, total_tokens: USAGE.prompt_tokens + USAGE.completion_tokens }
        })
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resume(Effect.succeed({ server, fake: { port, calls } }))
    })
  }),
  ({ server }) => Effect.sync(() => server.close())
).pipe(Effect.map(({ fake }) => fake))

const fakeModel = (id: string, upstream: string, port: number, aliases: ReadonlyArray<"balanced" | "fast"> = []) => ({
  id,
  provider: "openai" as const,
  base_url: `http://127.0.0.1:${port}/v1`,
  upstream_model: upstream,
  short_name: upstream,
  credits_per_1k_input: 1,
  credits_per_1k_output: 2,
  aliases,
  requests_per_minute: 1000,
  max_retries: 0,
  timeout_seconds: 5
})

/** The fake server. */
const fakeServer = Layer.scoped(FakeModel, start)

/** A catalog serving the fake server's three models beside the local engine (it replaces the profile's). */
const fakeCatalog = Layer.unwrapEffect(Effect.map(FakeModel, (fake) =>
  Catalogs.layerStatic({
    models: [
      fakeModel("acme/echo-large-2", "echo", fake.port, ["balanced"]),
      fakeModel("acme/busy-1", "busy", fake.port),
      fakeModel("acme/down-1", "down", fake.port)
    ]
  })))

/** `eachProfile`, on nodes that serve the fake models. */
export const eachProfileWithFakeModel = (
  title: string,
  body: (it: Vitest.MethodsNonLive<HttpClient.HttpClient | HttpServer.HttpServer | Infrastructure | FakeModel, true>) => void
) => eachProfile<FakeModel>(title, body, undefined, { catalog: fakeCatalog.pipe(Layer.provide(fakeServer)), extra: fakeServer })
