/** Writes start one per turn of the event loop, in the order they came (src/http/ReadsFirst.ts). */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { WriteTurns } from "../../src/http/ReadsFirst.ts"

describe("write turns", () => {
  it.scoped("start in arrival order, each in a turn of the event loop of its own", () =>
    Effect.gen(function*() {
      const { turn } = yield* WriteTurns
      // Counts the event loop's turns while the writes wait.
      let turns = 0
      let counting = true
      const tick = () => {
        turns++
        if (counting) setImmediate(tick)
      }
      setImmediate(tick)
      const started: Array<{ readonly write: number; readonly turn: number }> = []
      const fibers = []
      for (let write = 0; write < 6; write++) {
        fibers.push(yield* Effect.fork(Effect.zipRight(turn, Effect.sync(() => started.push({ write, turn: turns })))))
      }
      yield* Fiber.joinAll(fibers)
      counting = false
      expect(started.map((s) => s.write)).toEqual([0, 1, 2, 3, 4, 5])
      for (let i = 1; i < started.length; i++) expect(started[i]!.turn).toBeGreaterThan(started[i - 1]!.turn)
    }).pipe(Effect.provide(Layer.fresh(WriteTurns.layer))))

  it.scoped("a write interrupted while it waits does not hold up the others", () =>
    Effect.gen(function*() {
      const { turn } = yield* WriteTurns
      const started: Array<number> = []
      const first = yield* Effect.fork(Effect.zipRight(turn, Effect.sync(() => started.push(1))))
      const second = yield* Effect.fork(Effect.zipRight(turn, Effect.sync(() => started.push(2))))
      const third = yield* Effect.fork(Effect.zipRight(turn, Effect.sync(() => started.push(3))))
      yield* Fiber.interrupt(second)
      yield* Fiber.joinAll([first, third])
      expect(started).toEqual([1, 3])
    }).pipe(Effect.provide(Layer.fresh(WriteTurns.layer))))
})
