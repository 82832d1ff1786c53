/** The loops' retry schedule: 200 ms doubling to at most 30 s, each delay within a quarter of that either way. */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, Schedule } from "effect"
import { backoff } from "../../src/space/SupervisedLoop.ts"

describe("the loops' backoff", () => {
  it.effect("doubles from 200 ms, stops growing at 30 s, and is jittered within ±25%", () =>
    Effect.gen(function*() {
      const delays = Chunk.toReadonlyArray(yield* Schedule.run(Schedule.delays(backoff), 0, Array.from({ length: 14 }, (_, i) => i)))
      expect(delays).toHaveLength(14)
      const nominal = delays.map((_, n) => Math.min(30_000, 200 * 2 ** n))
      delays.forEach((delay, n) => {
        const ms = Duration.toMillis(delay)
        expect(ms).toBeGreaterThanOrEqual(nominal[n]! * 0.75)
        expect(ms).toBeLessThanOrEqual(nominal[n]! * 1.25)
      })
      // Jittered: not every delay is its nominal value.
      expect(delays.some((delay, n) => Duration.toMillis(delay) !== nominal[n])).toBe(true)
    }))
})
