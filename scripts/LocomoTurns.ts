/**
 * What the engine-alone harnesses (eval-retrieval.ts, tune-weights.ts) share,
 * so that weights are tuned on the index the evaluation measures: which
 * conversations of a LoCoMo file to run, and their turns in a HybridIndex.
 */
import type { HybridIndex } from "../src/retrieval/HybridIndex.ts"
import type { LocomoConversation } from "../src/retrieval/LocomoEval.ts"

/** "0-2" or "0,3,4": which conversations of the file to run (all when undefined), as an Array.filter predicate. */
export const pickConversations = (spec: string | undefined) => {
  if (spec === undefined) return () => true
  const chosen = new Set(spec.split(",").flatMap((part) => {
    const [from, to] = part.split("-").map(Number)
    return Array.from({ length: (to ?? from!) - from! + 1 }, (_, i) => from! + i)
  }))
  return (_: unknown, i: number) => chosen.has(i)
}

/**
 * Every turn of `conversation` in `index`, under ids `<prefix><i>` (each id's
 * dia id into `byId`): the session's date in its keyword text, its speaker as
 * its speaker and its one entity, its session as its group.
 */
export const indexTurns = (
  index: HybridIndex,
  conversation: LocomoConversation,
  options: { readonly prefix: string; readonly byId: Map<string, string>; readonly embed: ((text: string) => Float32Array) | undefined }
) =>
  conversation.turns.forEach((turn, i) => {
    const id = `${options.prefix}${i}`
    options.byId.set(id, turn.diaId)
    const date = new Date(turn.timestamp)
    const speaker = turn.content.split(":")[0]!
    index.upsert({
      id,
      text: turn.content,
      keywordExtra: date.toUTCString().slice(5, 16),
      vector: options.embed?.(turn.content),
      entities: [speaker],
      speaker,
      eventTime: date.getTime(),
      groupKey: `${options.prefix}${turn.timestamp}`,
      position: i
    })
  })
