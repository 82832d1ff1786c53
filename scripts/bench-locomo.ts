/**
 * `npm run bench:locomo -- --data FILE [--json]`: LoCoMo through the service.
 * Each conversation goes into its own fresh space (one record per turn,
 * "Speaker: text", timestamp = session date, metadata {dia_id}); then the top
 * 20 memories for every question of categories 1-4 give evidence recall@k and MRR.
 */
import { readFileSync } from "node:fs"
import { parseLocomo, RecallMeter } from "../src/retrieval/LocomoEval.ts"
import { arg, percentile, startBenchServer } from "./BenchServer.ts"

const file = arg("--data", "../shared/bench/locomo-dev.json")!
const asJson = process.argv.includes("--json")
const conversations = parseLocomo(JSON.parse(readFileSync(file, "utf8")))
const server = await startBenchServer()
const meter = new RecallMeter()
const latencies: Array<number> = []
let turns = 0
let ackMs = 0
let storedMs = 0
try {
  for (const [n, conversation] of conversations.entries()) {
    const spaceId = `locomo-${n + 1}`
    const started = performance.now()
    const jobs: Array<string> = []
    for (let i = 0; i < conversation.turns.length; i += 100) {
      const items = conversation.turns.slice(i, i + 100).map((turn) => ({
        content: turn.content,
        timestamp: turn.timestamp,
        metadata: { dia_id: turn.diaId }
      }))
      jobs.push((await server.call("POST", "/v1/record/batch", { space_id: spaceId, items })).job_id)
    }
    ackMs += performance.now() - started
    for (const job of jobs) {
      for (;;) {
        const status = await server.call("GET", `/v1/spaces/${spaceId}/jobs/${job}`)
        if (status.status !== "queued" && status.status !== "processing") break
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    storedMs += performance.now() - started
    turns += conversation.turns.length
    for (const q of conversation.questions) {
      const t = performance.now()
      const reply = await server.call("POST", "/v1/retrieve", { space_id: spaceId, query: q.question, limit: 20 })
      latencies.push(performance.now() - t)
      meter.add(q.category, q.evidence, reply.results.map((r: any) => String(r.metadata?.dia_id ?? "")))
    }
    if (!asJson) console.error(`conversation ${n + 1}/${conversations.length}: ${conversation.turns.length} turns, ${conversation.questions.length} questions`)
  }
} finally {
  await server.stop()
}
const overall = RecallMeter.mean(meter.overall)
const summary = {
  recall_at_5: Number(overall.recall_at_5.toFixed(4)),
  recall_at_10: Number(overall.recall_at_10.toFixed(4)),
  recall_at_20: Number(overall.recall_at_20.toFixed(4)),
  mrr: Number(overall.mrr.toFixed(4)),
  ingest_per_s: Number((turns / (ackMs / 1000)).toFixed(1)),
  ingest_stored_per_s: Number((turns / (storedMs / 1000)).toFixed(1)),
  retrieve_p50_ms: Number(percentile(latencies, 50).toFixed(1)),
  retrieve_p95_ms: Number(percentile(latencies, 95).toFixed(1)),
  questions: overall.questions
}
console.log(meter.table())
console.log(
  `ingest: ${summary.ingest_per_s} turns/s acknowledged, ${summary.ingest_stored_per_s} turns/s stored and indexed; ` +
    `retrieve p50 ${summary.retrieve_p50_ms} ms, p95 ${summary.retrieve_p95_ms} ms`
)
if (asJson) console.log(JSON.stringify(summary))
