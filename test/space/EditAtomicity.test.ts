/**
 * An edit changes the store and the index together or not at all: when the
 * new text cannot be embedded, the PATCH fails and the memory says what it
 * said before, in the list, the history and recall alike. The embedder is the
 * offline one, except that it fails on marked text, as a hosted one would, and
 * like a hosted one its vectors are stored (the offline embedder's are made
 * again from the words, so an edit never waits on it).
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { Models } from "../../layers/Models.ts"
import { Embedder, EmbedderError } from "../../services/embedder/Embedder.ts"
import { call, createKey, signup } from "../support/Http.ts"
import { profiles } from "../support/Profiles.ts"
import { testNode } from "../support/TestNode.ts"

const MARK = "[no-vector]"

const markedModels = Layer.effect(
  Embedder,
  Effect.map(Embedder, (offline) => ({
    ...offline,
    wordPart: undefined,
    embed: (texts: ReadonlyArray<string>) =>
      texts.some((text) => text.includes(MARK))
        ? Effect.fail(new EmbedderError({ message: "the embeddings endpoint is down" }))
        : offline.embed(texts)
  }))
).pipe(Layer.provideMerge(Models))

for (const profile of profiles) {
  layer(testNode(profile.infrastructure(markedModels)), { excludeTestServices: true, timeout: Duration.minutes(2) })(
    `an edit is atomic [${profile.name}]`,
    (it) => {
      it.effect("a new text that cannot be embedded fails the PATCH and changes nothing", () =>
        Effect.gen(function*() {
          const owner = yield* signup()
          const key = (yield* createKey(owner.token)).raw_key
          const spaceId = `atomic-${Date.now()}`
          const stored = yield* call("POST", "/v1/record", { token: key, json: { space_id: spaceId, content: "Rosa repairs violins in Cremona." } })
          expect(stored.status).toBe(200)
          const id = stored.body.memories[0].memory_id

          const failed = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${id}`, {
            token: key,
            json: { text: `Rosa repairs cellos in Parma. ${MARK}`, tags: ["moved"] }
          })
          expect(failed.status).toBe(503)
          expect(failed.body.error.code).toBe("service_unavailable")

          const listed = (yield* call("GET", `/v1/spaces/${spaceId}/memories`, { token: key })).body.items[0]
          expect(listed).toMatchObject({ id, text: "Rosa repairs violins in Cremona.", tags: [] })
          const history = (yield* call("GET", `/v1/spaces/${spaceId}/memories/${id}/history`, { token: key })).body
          expect(history.entries.map((e: any) => e.change)).toEqual(["created"])
          const recalled = (yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "violins Cremona" } })).body
          expect(recalled.results[0]).toMatchObject({ memory_id: id, content: "Rosa repairs violins in Cremona." })

          // The same edit with a text that embeds goes through, store and index together.
          const edited = yield* call("PATCH", `/v1/spaces/${spaceId}/memories/${id}`, { token: key, json: { text: "Rosa repairs cellos in Parma." } })
          expect(edited.status).toBe(200)
          const after = (yield* call("POST", "/v1/retrieve", { token: key, json: { space_id: spaceId, query: "cellos Parma" } })).body
          expect(after.results[0]).toMatchObject({ memory_id: id, content: "Rosa repairs cellos in Parma." })
        }))
    }
  )
}
