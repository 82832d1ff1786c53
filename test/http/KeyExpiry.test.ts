/** Expiry on the virtual clock: the node is built inside each test so its handlers read the TestClock. */
import type { HttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Layer, TestClock } from "effect"
import { call, createKey, signup } from "../support/Http.ts"
import { type Profile, profiles } from "../support/Profiles.ts"
import { NodeEntities, NodeServices, settings } from "../support/TestNode.ts"

const START = Date.parse("2026-03-01T12:00:00.000Z")
const HOUR = 3_600_000

/**
 * Runs `body` against a node built at START on the virtual clock. The
 * infrastructure and the entities run on the live clock (the cluster's
 * timers would never fire on the TestClock); the HTTP services on the virtual one.
 */
const atStart = <A, E>(profile: Profile, body: Effect.Effect<A, E, HttpClient.HttpClient>) =>
  Effect.gen(function*() {
    const running = yield* Layer.build(
      NodeEntities.pipe(Layer.provideMerge(profile.infrastructure()), Layer.provideMerge(settings()))
    ).pipe(Effect.withClock(Clock.make()))
    yield* TestClock.setTime(START)
    const node = yield* Layer.build(NodeServices.pipe(Layer.provide(Layer.succeedContext(running))))
    return yield* Effect.provide(body, node)
  })

for (const profile of profiles) {
  describe(`expiry on the TestClock [${profile.name}]`, () => {
    it.scoped("a key works until expires_at, then answers key_expired and lists as expired", () =>
      atStart(profile, Effect.gen(function*() {
        const owner = yield* signup()
        const expiring = yield* createKey(owner.token, { name: "one day", env: "live", expires_in_days: 1 })
        const forever = yield* createKey(owner.token, { name: "forever", env: "live" })
        expect(expiring.expires_at).toBe(new Date(START + 24 * HOUR).toISOString())
        expect(forever.expires_at).toBeNull()

        yield* TestClock.adjust("23 hours")
        expect((yield* call("GET", "/v1/spaces", { token: expiring.raw_key })).status).toBe(200)

        yield* TestClock.adjust("1 hour")
        const expired = yield* call("GET", "/v1/spaces", { token: expiring.raw_key })
        expect(expired.status).toBe(401)
        expect(expired.body.error.code).toBe("key_expired")
        expect((yield* call("GET", "/v1/spaces", { token: forever.raw_key })).status).toBe(200)

        const listed = yield* call("GET", "/v1/api-keys", { token: owner.token })
        const byName = Object.fromEntries(listed.body.map((k: any) => [k.name, k.status]))
        expect(byName).toEqual({ "one day": "expired", forever: "active" })

        // Expiry cannot be undone: a later revoke still works, and the key stays rejected.
        expect((yield* call("DELETE", `/v1/api-keys/${expiring.id}`, { token: owner.token })).status).toBe(204)
        expect((yield* call("GET", "/v1/spaces", { token: expiring.raw_key })).body.error.code).toBe("unauthorized")
      })), { timeout: 60_000 })

    it.scoped("a session expires after SESSION_TTL_HOURS (720 h)", () =>
      atStart(profile, Effect.gen(function*() {
        const owner = yield* signup()
        yield* TestClock.adjust("719 hours")
        expect((yield* call("GET", "/v1/orgs/me", { token: owner.token })).status).toBe(200)
        yield* TestClock.adjust("1 hour")
        const late = yield* call("GET", "/v1/orgs/me", { token: owner.token })
        expect(late.status).toBe(401)
        expect(late.body.error.code).toBe("unauthorized")
      })), { timeout: 60_000 })
  })
}
