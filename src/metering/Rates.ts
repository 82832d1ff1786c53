/**
 * What each metered operation costs, in credits (the spec's rates). Model
 * tokens are priced by the model's own per-1K rates on top of the base.
 */
import type { ModelUsage } from "../../services/llm/Provider.ts"

export const RATES = {
  /** Each memory stored (written, or a document's chunk on completion). */
  memory_stored: 2,
  /** A retrieve, search or proxy turn's recall. */
  search: 1,
  /** The base of a reason call, an ask about a user, a memory model's create or refresh. */
  insight: 5,
  /** Reading a user's profile. */
  user_profile: 1
} as const

export type FixedOp = keyof typeof RATES
/** The operations the ledger records; `model_tokens` is priced per call. */
export type OpType = FixedOp | "model_tokens"

/** Credits for a model call's tokens at its per-1K rates, rounded up to a whole credit. */
export const tokenCredits = (usage: ModelUsage, rates: { readonly inputRate: number; readonly outputRate: number }) =>
  Math.ceil((usage.input_tokens / 1000) * rates.inputRate + (usage.output_tokens / 1000) * rates.outputRate)
