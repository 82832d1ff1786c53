/**
 * The clock a space's own timers run on: how long writes have settled before
 * consolidation, a memory model's refresh debounce. The live clock in every
 * profile; a test can give a TestClock, so a delay is adjusted rather than
 * waited out (the cluster itself always runs on the live clock).
 */
import { Clock, Context, Layer } from "effect"

/**
 * Wall time, whatever clock the space's timers run on: the pauses that pace
 * background work against the writes (how long writes have been quiet, when
 * the index was last snapshotted) are no events of the space.
 */
export const wallClock: Clock.Clock = Clock.make()

export class SpaceClock extends Context.Tag("engram/space/SpaceClock")<SpaceClock, Clock.Clock>() {
  static readonly live = Layer.sync(SpaceClock, () => Clock.make())
}
