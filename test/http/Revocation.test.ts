/**
 * Two nodes on one store and one cache, as behind a load balancer: a key that
 * node A already trusts is refused by A the moment node B revokes it.
 */
import { HttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { profiles } from "../support/Profiles.ts"
import { NodeEntities, NodeServices, settings } from "../support/TestNode.ts"

for (const profile of profiles) {
  describe(`revocation across nodes [${profile.name}]`, () => {
    it.live("a revoked key is rejected at once by a node that had it cached", () =>
      Effect.gen(function*() {
        const shared = yield* Layer.build(NodeEntities.pipe(Layer.provideMerge(profile.infrastructure()), Layer.provideMerge(settings())))
        const nodeA = yield* Layer.build(NodeServices.pipe(Layer.provide(Layer.succeedContext(shared))))
        const nodeB = yield* Layer.build(NodeServices.pipe(Layer.provide(Layer.succeedContext(shared))))
        const onA = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) =>
          Effect.provideService(effect, HttpClient.HttpClient, Context.get(nodeA, HttpClient.HttpClient))
        const onB = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) =>
          Effect.provideService(effect, HttpClient.HttpClient, Context.get(nodeB, HttpClient.HttpClient))

        const owner = yield* onB(signup())
        const key = yield* onB(createKey(owner.token))
        expect((yield* onA(call("GET", "/v1/spaces", { token: key.raw_key }))).status).toBe(200)
        expect((yield* onA(call("GET", "/v1/spaces", { token: key.raw_key }))).status).toBe(200)

        expect((yield* onB(call("DELETE", `/v1/api-keys/${key.id}`, { token: owner.token }))).status).toBe(204)
        const refused = yield* onA(call("GET", "/v1/spaces", { token: key.raw_key }))
        expect(refused.status).toBe(401)
        expect(refused.body.error.code).toBe("unauthorized")
      }).pipe(Effect.scoped), { timeout: 60_000 })
  })
}
