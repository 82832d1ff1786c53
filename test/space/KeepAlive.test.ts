/**
 * The Space entity's shared keep-alive: one message while any loop works,
 * released a linger after the last loop stops, and never by one loop while
 * another still works. Driven with a recording stand-in for the cluster's
 * `Entity.keepAlive` and the test clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { makeKeepAlive } from "../../src/space/KeepAlive.ts"

const recorder = () => {
  const calls: Array<boolean> = []
  return { calls, keepAlive: (enabled: boolean) => Effect.sync(() => void calls.push(enabled)) }
}

describe("the space's shared keep-alive", () => {
  it.scoped("is sent once for loops working together, and let go only a linger after the last one stops", () =>
    Effect.gen(function*() {
      const { calls, keepAlive } = recorder()
      const alive = yield* makeKeepAlive({ linger: "1 second", keepAlive })
      yield* alive.acquire
      yield* alive.acquire
      yield* alive.acquire
      expect(calls).toEqual([true])
      // One loop stops while the others work: the entity stays kept alive, however long.
      yield* alive.release
      yield* TestClock.adjust("10 seconds")
      expect(calls).toEqual([true])
      expect(alive.held()).toBe(true)
      yield* alive.release
      yield* alive.release
      yield* TestClock.adjust("999 millis")
      expect(calls).toEqual([true])
      yield* TestClock.adjust("1 millis")
      expect(calls).toEqual([true, false])
      expect(alive.held()).toBe(false)
    }))

  it.scoped("a loop starting within the linger keeps the one keep-alive: a stream of writes sends it once", () =>
    Effect.gen(function*() {
      const { calls, keepAlive } = recorder()
      const alive = yield* makeKeepAlive({ linger: "1 second", keepAlive })
      for (let write = 0; write < 20; write++) {
        yield* alive.acquire
        yield* TestClock.adjust("30 millis")
        yield* alive.release
        yield* TestClock.adjust("200 millis")
      }
      expect(calls).toEqual([true])
      yield* TestClock.adjust("1 second")
      expect(calls).toEqual([true, false])
      // After it was let go, the next work sends it again.
      yield* alive.acquire
      expect(calls).toEqual([true, false, true])
    }))

  it.effect("is let go when the entity's scope closes while a loop still holds it", () =>
    Effect.gen(function*() {
      const { calls, keepAlive } = recorder()
      yield* Effect.scoped(Effect.gen(function*() {
        const alive = yield* makeKeepAlive({ linger: "1 second", keepAlive })
        yield* alive.acquire
      }))
      expect(calls).toEqual([true, false])
    }))

  it.scoped("a keep-alive the store refused is not counted: the next loop asks again, and a release does not undercount", () =>
    Effect.gen(function*() {
      const calls: Array<boolean> = []
      let refuse = true
      const alive = yield* makeKeepAlive({
        linger: "1 second",
        keepAlive: (enabled) => (enabled && refuse ? Effect.dieMessage("store down") : Effect.sync(() => void calls.push(enabled)))
      })
      const first = yield* Effect.exit(alive.acquire)
      expect(first._tag).toBe("Failure")
      expect(alive.held()).toBe(false)
      refuse = false
      yield* alive.acquire
      yield* alive.acquire
      expect(calls).toEqual([true])
      yield* alive.release
      yield* TestClock.adjust("5 seconds")
      // One loop still holds it.
      expect(calls).toEqual([true])
      yield* alive.release
      yield* TestClock.adjust("1 second")
      expect(calls).toEqual([true, false])
    }))

  it.scoped("a release waiting out its linger does not let go of a keep-alive taken again meanwhile", () =>
    Effect.gen(function*() {
      const { calls, keepAlive } = recorder()
      const alive = yield* makeKeepAlive({ linger: "1 second", keepAlive })
      yield* alive.acquire
      yield* alive.release
      yield* TestClock.adjust("500 millis")
      const working = yield* Effect.fork(alive.acquire)
      yield* Fiber.join(working)
      yield* TestClock.adjust("5 seconds")
      expect(calls).toEqual([true])
      expect(alive.held()).toBe(true)
    }))
})
