/**
 * `npm run bench:locomo -- --data FILE [--consolidate] [--json]`: LoCoMo
 * through the service. Each conversation goes into its own fresh space (one
 * record per turn, "Speaker: text", timestamp = session date, metadata
 * {dia_id}); then the top 20 facts for every question of categories 1-4 give
 * evidence recall@k and MRR. Without --consolidate the server does not
 * consolidate. With it, each space is consolidated first, and the bench also
 * reports evidence recall within a 1,000-token block (`format: block`), raw
 * facts only against the default view (notes standing in for their facts,
 * each note credited with its facts' dia_ids).
 */
import { readFileSync } from "node:fs"
import { parseLocomo, RecallMeter } from "../src/retrieval/LocomoEval.ts"
import { arg, percentile, startBenchServer } from "./BenchServer.ts"

const file = arg("--data", "../shared/bench/locomo-dev.json")!
const asJson = process.argv.includes("--json")
const consolidate = process.argv.includes("--consolidate")
/** With --consolidate: print each question whose consolidated block covers less evidence than the raw one, and both blocks. */
const showLosses = process.argv.includes("--losses")
const conversations = parseLocomo(JSON.parse(readFileSync(file, "utf8")))
const server = await startBenchServer({ CONSOLIDATION: consolidate ? "on" : "off" })
const meter = new RecallMeter()
const BUDGET = 1000
const budgeted = { raw: 0, consolidated: 0, questions: 0 }
/** The dev file's two halves (conversations 0-2 and 3-4, or the first three and the rest): recall must hold on both. */
const halves = [new RecallMeter(), new RecallMeter()]
const halfBudgeted = [{ raw: 0, consolidated: 0, questions: 0 }, { raw: 0, consolidated: 0, questions: 0 }]
let consolidationMs = 0
let notes = 0
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

    // The dia_ids each memory stands for: a fact its own, a note (or experience) its facts'.
    const diaIds = new Map<string, ReadonlyArray<string>>()
    if (consolidate) {
      const settling = performance.now()
      for (;;) {
        const status = await server.call("GET", `/v1/spaces/${spaceId}/consolidation`)
        if (status.pending_facts === 0) break
        await new Promise((r) => setTimeout(r, 250))
      }
      consolidationMs += performance.now() - settling
      const all = await server.call("GET", `/v1/spaces/${spaceId}/memories?limit=1000&prefer_observations=false`)
      const byId = new Map<string, any>(all.items.map((m: any) => [m.id, m]))
      // A summary is a gist of its notes' first words, not their evidence: it is credited with nothing.
      const credit = (id: string): ReadonlyArray<string> => {
        const memory = byId.get(id)
        if (!memory || memory.type === "summary") return []
        if (memory.source_ids.length === 0) return memory.metadata?.dia_id ? [String(memory.metadata.dia_id)] : []
        return memory.source_ids.flatMap(credit)
      }
      for (const id of byId.keys()) diaIds.set(id, credit(id))
      notes += all.items.filter((m: any) => m.type !== "fact").length
    }

    for (const q of conversation.questions) {
      const t = performance.now()
      const reply = await server.call("POST", "/v1/retrieve", { space_id: spaceId, query: q.question, limit: 20, memory_type: ["fact"] })
      latencies.push(performance.now() - t)
      const found = reply.results.map((r: any) => String(r.metadata?.dia_id ?? ""))
      meter.add(q.category, q.evidence, found)
      const half = n < 3 ? 0 : 1
      halves[half]!.add(q.category, q.evidence, found)
      if (!consolidate) continue
      const block = (extra: Record<string, unknown>) =>
        server.call("POST", "/v1/retrieve", { space_id: spaceId, query: q.question, limit: 100, format: "block", context_max_tokens: BUDGET, ...extra })
      const covered = (results: ReadonlyArray<any>) => {
        const seen = new Set(results.flatMap((r: any) => diaIds.get(r.memory_id) ?? []))
        return q.evidence.filter((id) => seen.has(id)).length / q.evidence.length
      }
      const rawBlock = await block({ memory_type: ["fact"], prefer_observations: false })
      const consolidatedBlock = await block({})
      const raw = covered(rawBlock.results)
      const consolidated = covered(consolidatedBlock.results)
      if (showLosses && consolidated < raw) {
        const line = (r: any) => `  ${r.memory_id} ${r.type ?? r.memory_type} [${(diaIds.get(r.memory_id) ?? []).join(" ")}] ${String(r.content).slice(0, 100)}`
        console.error(`LOSS conversation ${n} "${q.question}" evidence [${q.evidence.join(" ")}] raw ${raw.toFixed(2)} consolidated ${consolidated.toFixed(2)}`)
        console.error(` raw block (${rawBlock.results.length}):\n${rawBlock.results.map(line).join("\n")}`)
        console.error(` consolidated block (${consolidatedBlock.results.length}):\n${consolidatedBlock.results.map(line).join("\n")}`)
      }
      for (const tally of [budgeted, halfBudgeted[half]!]) {
        tally.raw += raw
        tally.consolidated += consolidated
        tally.questions++
      }
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
  questions: overall.questions,
  halves: halves.map((half, i) => {
    const mean = RecallMeter.mean(half.overall)
    return {
      conversations: i === 0 ? "0-2" : "3-",
      recall_at_10: Number(mean.recall_at_10.toFixed(4)),
      recall_at_20: Number(mean.recall_at_20.toFixed(4)),
      ...(consolidate
        ? {
          budgeted_recall_raw: Number((halfBudgeted[i]!.raw / Math.max(1, halfBudgeted[i]!.questions)).toFixed(4)),
          budgeted_recall_consolidated: Number((halfBudgeted[i]!.consolidated / Math.max(1, halfBudgeted[i]!.questions)).toFixed(4))
        }
        : {})
    }
  }),
  ...(consolidate
    ? {
      budgeted_recall_raw: Number((budgeted.raw / budgeted.questions).toFixed(4)),
      budgeted_recall_consolidated: Number((budgeted.consolidated / budgeted.questions).toFixed(4)),
      syntheses: notes,
      consolidation_seconds: Number((consolidationMs / 1000).toFixed(1))
    }
    : {})
}
console.log(meter.table())
console.log(
  `ingest: ${summary.ingest_per_s} turns/s acknowledged, ${summary.ingest_stored_per_s} turns/s stored and indexed; ` +
    `retrieve p50 ${summary.retrieve_p50_ms} ms, p95 ${summary.retrieve_p95_ms} ms`
)
for (const half of summary.halves) {
  console.log(
    `conversations ${half.conversations}: R@10 ${half.recall_at_10}, R@20 ${half.recall_at_20}` +
      ("budgeted_recall_raw" in half ? `; within a ${BUDGET}-token block raw ${half.budgeted_recall_raw}, consolidated ${half.budgeted_recall_consolidated}` : "")
  )
}
if (consolidate) {
  console.log(
    `evidence recall within a ${BUDGET}-token block: raw facts ${summary.budgeted_recall_raw}, ` +
      `consolidated ${summary.budgeted_recall_consolidated} (${summary.syntheses} notes, experiences and summaries; ` +
      `consolidation took ${summary.consolidation_seconds} s after storing)`
  )
}
if (asJson) console.log(JSON.stringify(summary))
