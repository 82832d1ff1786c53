import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { ReadPriority } from "../../services/EventLoop.ts"

describe("read priority", () => {
  it.live("a recall counts as served while it runs and for the window after it ends, not before any", () =>
    Effect.gen(function*() {
      const priority = yield* ReadPriority
      expect(priority.readRecently(1_000)).toBe(false)
      const done = yield* Deferred.make<void>()
      const recall = yield* Effect.fork(priority.read(Deferred.await(done)))
      yield* Effect.sleep("20 millis")
      expect(priority.readRecently(0)).toBe(true)
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(recall)
      expect(priority.readRecently(1_000)).toBe(true)
      yield* Effect.sleep("60 millis")
      expect(priority.readRecently(1_000)).toBe(true)
      expect(priority.readRecently(30)).toBe(false)
    }).pipe(Effect.provide(ReadPriority.Default)))
})
