/**
 * Tuning aid: the retrieval engine alone on a LoCoMo file, no service around
 * it. `npx tsx scripts/eval-retrieval.ts [--data FILE] [--models DIR] [--fast]
 * [--no-vectors] [--no-soft] [--conversations 0-2] [--timing]`; `W_<NAME>=x`
 * overrides a ranking weight. Check a change on both halves (0-2 and 3-4)
 * before keeping it: the judged conversations are others.
 */
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadGlove } from "../services/embedder/Glove.ts"
import { HybridIndex, WEIGHTS } from "../src/retrieval/HybridIndex.ts"
import { type LocomoConversation, parseLocomo, RecallMeter } from "../src/retrieval/LocomoEval.ts"
import { arg } from "./BenchServer.ts"
import { indexTurns, pickConversations } from "./LocomoTurns.ts"

const conversations = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json")!, "utf8")))
  .filter(pickConversations(arg("--conversations")))
const glove = await loadGlove(arg("--models", join(tmpdir(), "engram-models"))!)
for (const key of Object.keys(WEIGHTS) as Array<keyof typeof WEIGHTS>) {
  const value = process.env[`W_${key.toUpperCase()}`]
  if (value !== undefined) WEIGHTS[key] = Number(value)
}
const useVectors = !process.argv.includes("--no-vectors")
const useSoft = !process.argv.includes("--no-soft")
const mode = process.argv.includes("--fast") ? "fast" : "accurate"

/** Every turn of `conversation` in `index`, under ids `<prefix><i>`. */
const load = (index: HybridIndex, conversation: LocomoConversation, prefix: string, byId: Map<string, string>) =>
  indexTurns(index, conversation, { prefix, byId, embed: useVectors ? glove.embed : undefined })

if (process.argv.includes("--timing")) {
  // One space of about 11,000 memories (every turn of the file, four times over); every question, timed.
  const index = new HybridIndex(useSoft ? glove.wordVector : undefined)
  for (let copy = 0; copy < 4; copy++) conversations.forEach((c, n) => load(index, c, `c${copy}.${n}.`, new Map()))
  const questions = conversations.flatMap((c) => c.questions)
  const ask = (question: string) => index.search({ text: question, vector: useVectors ? glove.embed(question) : undefined, mode, limit: 20 })
  for (const q of questions.slice(0, 50)) ask(q.question) // warm-up
  // Three passes, each query's fastest: the machine's other load shows up as noise, not as cost.
  const times = questions.map(() => Infinity)
  for (let pass = 0; pass < 3; pass++) {
    questions.forEach((q, i) => {
      const started = performance.now()
      ask(q.question)
      times[i] = Math.min(times[i]!, performance.now() - started)
    })
  }
  times.sort((a, b) => a - b)
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(2)
  console.log(`${index.size} memories, ${times.length} queries (${mode}, embedding included, best of 3): p50 ${at(50)} ms, p95 ${at(95)} ms, max ${at(100)} ms`)
} else {
  const meter = new RecallMeter()
  for (const conversation of conversations) {
    const index = new HybridIndex(useSoft ? glove.wordVector : undefined)
    const byId = new Map<string, string>()
    load(index, conversation, "m", byId)
    for (const q of conversation.questions) {
      const hits = index.search({ text: q.question, vector: useVectors ? glove.embed(q.question) : undefined, mode, limit: 20 })
      meter.add(q.category, q.evidence, hits.map((h) => byId.get(h.id)!))
    }
  }
  console.log(meter.table())
}
