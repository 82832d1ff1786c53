/**
 * `npm run bench:growth -- [--data FILE] [--copies N] [--json]`: does recall
 * hold as one space grows? Every conversation of the LoCoMo file goes into
 * ONE space, then `--copies` (default 0) more copies of each under other
 * names (every speaker's name replaced, whole words, in every turn), each
 * turn with its session's date. Each question of categories 1-4 is asked of
 * that space; it counts as found at k when one of the first k results is a
 * turn of the original conversation from a session that holds its evidence.
 * Reported: session recall@5 and @10, evidence recall@10, the sessions and
 * memories in the space, retrieve p50 / p95. Consolidation is off.
 */
import { readFileSync } from "node:fs"
import { parseLocomo } from "../src/retrieval/LocomoEval.ts"
import { arg, percentile, startBenchServer } from "./BenchServer.ts"

const copies = Number(arg("--copies", "0"))
const asJson = process.argv.includes("--json")
const conversations = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json")!, "utf8")))
const log = (line: string) => {
  if (!asJson) console.error(line)
}

/** Names for the copies' speakers, none a LoCoMo speaker's. */
const NAMES = [
  "Abigail", "Bruno", "Celeste", "Dmitri", "Esther", "Farid", "Greta", "Hiro", "Ingrid", "Jasper", "Kalinda", "Lorenzo",
  "Mireille", "Nikolai", "Odette", "Pavel", "Quinn", "Rosalind", "Soren", "Thandiwe", "Ulrich", "Valentina", "Wendell",
  "Ximena", "Yusuf", "Zofia", "Anselm", "Beatrix", "Casimir", "Delphine", "Emeric", "Florence", "Gideon", "Honora"
]
const speakersOf = (turns: ReadonlyArray<{ readonly content: string }>) =>
  [...new Set(turns.map((t) => /^([^:]{1,40}):/.exec(t.content)?.[1]?.trim()).filter((s): s is string => s !== undefined))]
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const server = await startBenchServer({ CONSOLIDATION: "off" })
const spaceId = "growth"
let memories = 0
let sessions = 0
const latencies: Array<number> = []
const found = { at5: 0, at10: 0, evidence10: 0, questions: 0 }
try {
  const jobs: Array<string> = []
  let nameAt = 0
  for (let copy = 0; copy <= copies; copy++) {
    for (const [n, conversation] of conversations.entries()) {
      const renames = copy === 0
        ? []
        : speakersOf(conversation.turns).map((name) => [new RegExp(`(?<![\\p{L}])${escape(name)}(?![\\p{L}])`, "gu"), NAMES[nameAt++ % NAMES.length]!] as const)
      const items = conversation.turns.map((turn) => ({
        content: renames.reduce((text, [pattern, to]) => text.replace(pattern, to), turn.content),
        timestamp: turn.timestamp,
        // Each conversation's sessions, each copy's, are sessions of their own.
        session_id: `c${copy}-${n}-s${turn.session}`,
        metadata: { dia_id: turn.diaId, conversation: n, copy }
      }))
      sessions += new Set(conversation.turns.map((t) => t.session)).size
      memories += items.length
      for (let i = 0; i < items.length; i += 100) {
        jobs.push((await server.call("POST", "/v1/record/batch", { space_id: spaceId, items: items.slice(i, i + 100) })).job_id)
      }
    }
  }
  for (const job of jobs) {
    for (;;) {
      const status = await server.call("GET", `/v1/spaces/${spaceId}/jobs/${job}`)
      if (status.status !== "queued" && status.status !== "processing") break
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  log(`${memories} turns in ${sessions} sessions stored`)
  for (const [n, conversation] of conversations.entries()) {
    for (const q of conversation.questions) {
      const wanted = new Set(q.evidence.map((e) => e.split(":")[0]))
      const t = performance.now()
      // A session id, not a user's: the recall is unscoped, over the whole space.
      const reply = await server.call("POST", "/v1/retrieve", { space_id: spaceId, query: q.question, limit: 10, memory_type: ["fact"] })
      latencies.push(performance.now() - t)
      const own = reply.results.map((r: any) =>
        r.metadata?.copy === 0 && r.metadata?.conversation === n ? String(r.metadata?.dia_id ?? "") : ""
      )
      const inSession = own.map((id: string) => id !== "" && wanted.has(id.split(":")[0]))
      if (inSession.slice(0, 5).some(Boolean)) found.at5++
      if (inSession.some(Boolean)) found.at10++
      found.evidence10 += q.evidence.filter((e) => own.includes(e)).length / q.evidence.length
      found.questions++
    }
  }
} finally {
  await server.stop()
}
const summary = {
  copies,
  sessions,
  memories,
  questions: found.questions,
  session_recall_at_5: Number((found.at5 / found.questions).toFixed(4)),
  session_recall_at_10: Number((found.at10 / found.questions).toFixed(4)),
  evidence_recall_at_10: Number((found.evidence10 / found.questions).toFixed(4)),
  retrieve_p50_ms: Number(percentile(latencies, 50).toFixed(1)),
  retrieve_p95_ms: Number(percentile(latencies, 95).toFixed(1))
}
console.log(
  asJson
    ? JSON.stringify(summary)
    : `one space of ${sessions} sessions (${memories} turns, ${copies} renamed copies): the evidence's session in the top 5 for ` +
      `${(100 * summary.session_recall_at_5).toFixed(1)}% of ${summary.questions} questions, top 10 ` +
      `${(100 * summary.session_recall_at_10).toFixed(1)}%; evidence R@10 ${summary.evidence_recall_at_10}; ` +
      `retrieve p50 ${summary.retrieve_p50_ms} ms, p95 ${summary.retrieve_p95_ms} ms`
)
