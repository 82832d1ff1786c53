/**
 * A node whose spaces' timers (SpaceClock) run on the test's TestClock, while
 * the entities, the cluster and HTTP run on the live clock: a test adjusts
 * every delay instead of waiting it out.
 */
import type { HttpClient } from "@effect/platform"
import { Clock, Duration, Effect, Layer, type Scope, TestClock } from "effect"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import { SpaceClock } from "../../src/space/SpaceClock.ts"
import type { WebhookTransport } from "../../services/webhooks/Transport.ts"
import type { Profile } from "./Profiles.ts"
import { NodeEntities, NodeServices, settings } from "./TestNode.ts"

/** Real time passing (the test's own clock is the TestClock). */
export const realSleep = (millis: number) => Effect.sleep(Duration.millis(millis)).pipe(Effect.withClock(Clock.make()))

export const onTestClock = <A, E>(
  profile: Profile,
  overrides: Partial<AppConfigShape>,
  body: Effect.Effect<A, E, HttpClient.HttpClient | Scope.Scope | Layer.Layer.Success<typeof NodeServices>>,
  transport?: Layer.Layer<WebhookTransport>
) =>
  Effect.gen(function*() {
    const testClock = yield* TestClock.testClock()
    yield* TestClock.setTime(Date.now())
    const base = profile.infrastructure()
    const infrastructure = transport === undefined ? base : Layer.merge(base, transport)
    const running = yield* Layer.build(
      NodeEntities.pipe(
        Layer.provide(Layer.succeed(SpaceClock, testClock)),
        Layer.provideMerge(infrastructure),
        Layer.provideMerge(settings(overrides))
      )
    ).pipe(Effect.withClock(Clock.make()))
    const node = yield* Layer.build(NodeServices.pipe(Layer.provide(Layer.succeedContext(running))))
    return yield* Effect.provide(body, node)
  })
