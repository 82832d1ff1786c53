/**
 * Tuning aid: the retrieval engine alone on a LoCoMo file, no service around
 * it. `npx tsx scripts/eval-retrieval.ts [--data FILE] [--models DIR] [--fast]`
 */
import { readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { loadGlove } from "../services/embedder/Glove.ts"
import { HybridIndex, WEIGHTS } from "../src/retrieval/HybridIndex.ts"
import { parseLocomo, RecallMeter } from "../src/retrieval/LocomoEval.ts"

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1]! : fallback
}
const conversations = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json"), "utf8")))
const glove = await loadGlove(arg("--models", join(tmpdir(), "engram-models")))
for (const key of Object.keys(WEIGHTS) as Array<keyof typeof WEIGHTS>) {
  const value = process.env[`W_${key.toUpperCase()}`]
  if (value !== undefined) WEIGHTS[key] = Number(value)
}
const meter = new RecallMeter()
const useVectors = !process.argv.includes("--no-vectors")
for (const conversation of conversations) {
  const index = new HybridIndex()
  const byId = new Map<string, string>()
  conversation.turns.forEach((turn, i) => {
    const id = `m${i}`
    byId.set(id, turn.diaId)
    const date = new Date(turn.timestamp)
    index.upsert({
      id,
      text: turn.content,
      keywordExtra: date.toUTCString().slice(5, 16),
      vector: useVectors ? glove.embed(turn.content) : undefined,
      entities: [turn.content.split(":")[0]!],
      eventTime: date.getTime(),
      groupKey: turn.timestamp,
      position: i
    })
  })
  for (const q of conversation.questions) {
    const hits = index.search({ text: q.question, vector: useVectors ? glove.embed(q.question) : undefined, mode: process.argv.includes("--fast") ? "fast" : "accurate", limit: 20 })
    meter.add(q.category, q.evidence, hits.map((h) => byId.get(h.id)!))
  }
}
console.log(meter.table())
