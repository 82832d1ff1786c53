/**
 * Learns the ranking weights (`WEIGHTS` in src/retrieval/HybridIndex.ts) by
 * coordinate ascent on one half of a LoCoMo file and reports them on the
 * other: `npx tsx scripts/tune-weights.ts [--data FILE] [--models DIR]
 * [--train 0-2] [--test 3-4] [--rounds 3]`. The objective is R@10 + R@20 +
 * MRR over the training conversations' questions, every turn indexed as
 * scripts/eval-retrieval.ts indexes it (LocomoTurns.ts). Run it both ways round; a weight is worth
 * changing only where both directions agree.
 */
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadGlove } from "../services/embedder/Glove.ts"
import { HybridIndex, WEIGHTS } from "../src/retrieval/HybridIndex.ts"
import { type LocomoConversation, parseLocomo, RecallMeter } from "../src/retrieval/LocomoEval.ts"
import { arg } from "./BenchServer.ts"
import { indexTurns, pickConversations } from "./LocomoTurns.ts"

const all = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json")!, "utf8")))
const glove = await loadGlove(arg("--models", join(tmpdir(), "engram-models"))!)

interface Prepared {
  readonly index: HybridIndex
  readonly byId: Map<string, string>
  readonly questions: ReadonlyArray<{ readonly q: LocomoConversation["questions"][number]; readonly vector: Float32Array }>
}
const prepare = (conversation: LocomoConversation): Prepared => {
  const index = new HybridIndex(glove.wordVector)
  const byId = new Map<string, string>()
  indexTurns(index, conversation, { prefix: "m", byId, embed: glove.embed })
  return { index, byId, questions: conversation.questions.map((q) => ({ q, vector: glove.embed(q.question) })) }
}
const train = all.filter(pickConversations(arg("--train", "0-2"))).map(prepare)
const test = all.filter(pickConversations(arg("--test", "3-4"))).map(prepare)

const measure = (set: ReadonlyArray<Prepared>) => {
  const meter = new RecallMeter()
  for (const { index, byId, questions } of set) {
    for (const { q, vector } of questions) {
      const hits = index.search({ text: q.question, vector, mode: "accurate", limit: 20 })
      meter.add(q.category, q.evidence, hits.map((h) => byId.get(h.id)!))
    }
  }
  return meter
}
const objective = (meter: RecallMeter) => {
  const m = RecallMeter.mean(meter.overall)
  return m.recall_at_10 + m.recall_at_20 + m.mrr
}
const summary = (meter: RecallMeter) => {
  const m = RecallMeter.mean(meter.overall)
  return `R@10 ${m.recall_at_10.toFixed(4)} R@20 ${m.recall_at_20.toFixed(4)} MRR ${m.mrr.toFixed(4)}`
}

type Key = keyof typeof WEIGHTS
const tuned: ReadonlyArray<Key> = ["bm25", "soft", "neighbour", "decay", "answer", "entity", "date", "speaker"]
const start = { ...WEIGHTS }
console.log(`start: train ${summary(measure(train))}; test ${summary(measure(test))}`)
let best = objective(measure(train))
for (let round = 0; round < Number(arg("--rounds", "3")!); round++) {
  let moved = false
  for (const key of tuned) {
    const base = WEIGHTS[key]
    const step = Math.max(0.05, Math.abs(base) * 0.25)
    let chosen = base
    for (const candidate of [base - 2 * step, base - step, base + step, base + 2 * step]) {
      if (candidate < 0 || ((key === "bm25" || key === "decay") && candidate > 1)) continue
      WEIGHTS[key] = candidate
      const value = objective(measure(train))
      if (value > best + 1e-4) {
        best = value
        chosen = candidate
        moved = true
      }
    }
    WEIGHTS[key] = chosen
    if (WEIGHTS[key] !== base) console.log(`round ${round}: ${key} ${base} -> ${WEIGHTS[key]} (objective ${best.toFixed(4)})`)
  }
  if (!moved) break
}
console.log("learned:", JSON.stringify(Object.fromEntries(tuned.map((k) => [k, Number(WEIGHTS[k].toFixed(3))]))))
console.log("changed from:", JSON.stringify(Object.fromEntries(tuned.filter((k) => WEIGHTS[k] !== start[k]).map((k) => [k, start[k]]))))
console.log(`learned: train ${summary(measure(train))}; test ${summary(measure(test))}`)
