/**
 * Who writes a note: the offline engine (the default, no model) or a catalog
 * model (CONSOLIDATION_MODEL). Either writes from the facts the planner
 * grouped, and nothing else; a model that fails fails the run, which the
 * space's loop retries and reports: it is never replaced by the offline engine.
 */
import { Context, Data, Effect, Layer } from "effect"
import type { GroupPlan } from "./Planner.ts"
import { changeText, noteText } from "./Synthesis.ts"

export class ConsolidationFailure extends Data.TaggedError("ConsolidationFailure")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface ConsolidatorShape {
  /** Reported on runs and spans: `offline`, or the model's id. */
  readonly engine: string
  /** The text of a group's note. */
  readonly write: (group: GroupPlan) => Effect.Effect<string, ConsolidationFailure>
}

export class Consolidator extends Context.Tag("engram/consolidation/Consolidator")<Consolidator, ConsolidatorShape>() {}

/** The offline engine's note: the facts, dated and deduplicated; or the change of an attribute. */
export const offlineText = (group: GroupPlan) =>
  group.change !== null && group.subject !== null
    ? changeText(group.subject, group.change.attribute, group.change.values)
    : noteText(group.facts)

export const layerOffline = Layer.succeed(Consolidator, {
  engine: "offline",
  write: (group) => Effect.sync(() => offlineText(group))
})
