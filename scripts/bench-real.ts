/**
 * `npm run bench:real -- [--turns 20000] [--turn-chars 1000] [--queries 300] [--space-turns N] [--data-dir DIR] [--json]`:
 * one space stores long turns of real conversation, then is queried, restarted and woken, on the embedded default.
 * Items are consecutive turns of one LoCoMo session (`../shared/bench/locomo-dev.json`), speaker labels kept,
 * joined until about `--turn-chars` characters, the session's date as the timestamp; past the corpus's end it
 * repeats under new ids (the report says how many items were distinct). Questions are LoCoMo's own.
 * Reported: stored turns/s and server CPU per turn over the fresh node's first 500 turns and over all of them
 * (batches of 100, 4 in flight); retrieve p50/p95 while storing and once quiet; the first retrieve after a
 * restart (the space waking; a node may start waking a space by itself, for work it left due), alone, and
 * after another restart while another space is queried, with that space's latency meanwhile against its
 * quiet latency afterwards; RSS; DATA_DIR size (WAL apart);
 * the memories stored. `--space-turns N` spreads the turns over spaces of N turns (one per conversation-sized
 * chat); the queries then go to the last space. Consolidation is off unless CONSOLIDATION is set.
 * `--data-dir DIR` keeps the store: a second run on it skips storing and measures the rest.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseLocomo } from "../src/retrieval/LocomoEval.ts"
import { arg, directoryBytes, percentile, startBenchServer } from "./BenchServer.ts"

const turns = Number(arg("--turns", "20000"))
const turnChars = Number(arg("--turn-chars", "1000"))
const queries = Number(arg("--queries", "300"))
const spaceTurns = Number(arg("--space-turns", String(turns)))
const dataDirArg = arg("--data-dir")
const asJson = process.argv.includes("--json")
const log = (line: string) => {
  if (!asJson) console.error(line)
}

const conversations = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json")!, "utf8")))

/** Consecutive turns of one session joined into items of about `turnChars` characters. */
const items: Array<{ readonly content: string; readonly timestamp: string }> = []
for (const conversation of conversations) {
  let lines: Array<string> = []
  let length = 0
  let session = -1
  let timestamp = ""
  const flush = () => {
    if (lines.length > 0) items.push({ content: lines.join("\n"), timestamp })
    lines = []
    length = 0
  }
  for (const turn of conversation.turns) {
    if (turn.session !== session) {
      flush()
      session = turn.session
      timestamp = turn.timestamp
    }
    lines.push(turn.content)
    length += turn.content.length + 1
    if (length >= turnChars) flush()
  }
  flush()
}
const questions = conversations.flatMap((c) => c.questions.map((q) => q.question))
const textChars = Array.from({ length: turns }, (_, i) => items[i % items.length]!.content.length).reduce((a, b) => a + b, 0)

const dirBytes = directoryBytes
/** The store's write-ahead log, wherever the embedded store keeps it under DATA_DIR. */
const walBytes = (dir: string): number => {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += entry.name === "pg_wal" ? dirBytes(path) : walBytes(path)
  }
  return total
}
const mb = (bytes: number) => Number((bytes / 1024 / 1024).toFixed(1))

const server = await startBenchServer({ CONSOLIDATION: process.env.CONSOLIDATION ?? "off" }, dataDirArg === undefined ? {} : { dataDir: dataDirArg })
const serverCpuMs = () => {
  const fields = readFileSync(`/proc/${server.child.pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}
const spaceOf = (turn: number) => `real-${Math.floor(turn / spaceTurns)}`
const lastSpace = spaceOf(turns - 1)
const neighbour = "real-neighbour"
let question = 0
const nextQuestion = () => questions[question++ % questions.length]!
const retrieve = async (space: string) => {
  const started = performance.now()
  await server.call("POST", "/v1/retrieve", { space_id: space, query: nextQuestion(), limit: 10 })
  return performance.now() - started
}
const ms = (value: number) => Number(value.toFixed(1))
const waitJob = async (space: string, job: string) => {
  for (;;) {
    const status = await server.call("GET", `/v1/spaces/${space}/jobs/${job}`)
    if (status.status !== "queued" && status.status !== "processing") return status
    await new Promise((r) => setTimeout(r, 25))
  }
}

try {
  const existing = await server.call("GET", `/v1/spaces/${lastSpace}/memories?limit=1`).then((r) => r.total as number, () => 0)
  let stored: Record<string, number | null> = {
    first_turns: null, first_turns_per_s: null, first_cpu_ms_per_turn: null,
    turns_per_s: null, cpu_ms_per_turn: null, storing_retrieve_p50_ms: null, storing_retrieve_p95_ms: null, storing_queries: 0
  }
  if (existing === 0) {
    // A small space beside the big one: its latency is watched while the big one wakes.
    for (let i = 0; i < 200; i += 100) {
      const small = Array.from({ length: 100 }, (_, k) => items[(i + k) % items.length]!)
      await waitJob(neighbour, (await server.call("POST", "/v1/record/batch", { space_id: neighbour, items: small })).job_id)
    }

    const cpuStarted = serverCpuMs()
    const started = performance.now()
    const firstTurns = Math.min(500, turns)
    let firstDone: { seconds: number; cpuMs: number } | null = null
    const during: Array<number> = []
    let storing = true
    // Queries while the space stores, from the first 500 turns on (one client, one query at a time).
    const querying = (async () => {
      while (storing) {
        if (firstDone === null) {
          await new Promise((r) => setTimeout(r, 50))
          continue
        }
        during.push(await retrieve(lastSpace === spaceOf(0) ? lastSpace : spaceOf(0)))
      }
    })()
    const inFlight: Array<{ space: string; job: string; end: number }> = []
    let done = 0
    const settleOldest = async () => {
      const oldest = inFlight.shift()!
      const status = await waitJob(oldest.space, oldest.job)
      if (status.status !== "completed") throw new Error(`job ${oldest.job} ended ${status.status}`)
      done = oldest.end
      if (firstDone === null && done >= firstTurns) firstDone = { seconds: (performance.now() - started) / 1000, cpuMs: serverCpuMs() - cpuStarted }
      if (done % 2000 === 0) log(`${done} turns stored, ${(done / ((performance.now() - started) / 1000)).toFixed(1)} turns/s`)
    }
    for (let sent = 0; sent < turns;) {
      const space = spaceOf(sent)
      // A batch never spans two spaces.
      const end = Math.min(sent + 100, turns, (Math.floor(sent / spaceTurns) + 1) * spaceTurns)
      const batch = Array.from({ length: end - sent }, (_, k) => items[(sent + k) % items.length]!)
      const reply = await server.call("POST", "/v1/record/batch", { space_id: space, items: batch })
      inFlight.push({ space, job: reply.job_id, end })
      sent = end
      if (inFlight.length >= 4) await settleOldest()
    }
    while (inFlight.length > 0) await settleOldest()
    const seconds = (performance.now() - started) / 1000
    const cpuMs = serverCpuMs() - cpuStarted
    storing = false
    await querying
    const first = firstDone ?? { seconds, cpuMs }
    stored = {
      first_turns: firstTurns,
      first_turns_per_s: Number((firstTurns / first.seconds).toFixed(1)),
      first_cpu_ms_per_turn: ms(first.cpuMs / firstTurns),
      turns_per_s: Number((turns / seconds).toFixed(1)),
      cpu_ms_per_turn: ms(cpuMs / turns),
      storing_retrieve_p50_ms: during.length === 0 ? null : ms(percentile(during, 50)),
      storing_retrieve_p95_ms: during.length === 0 ? null : ms(percentile(during, 95)),
      storing_queries: during.length
    }
  } else {
    log(`${existing} memories already stored in ${lastSpace}: storing skipped`)
  }

  for (let i = 0; i < 20; i++) await retrieve(lastSpace)
  const quiet: Array<number> = []
  for (let i = 0; i < queries; i++) quiet.push(await retrieve(lastSpace))
  const rssServing = server.rssMb()
  const memories = (await server.call("GET", `/v1/spaces/${lastSpace}/memories?limit=1`)).total as number

  // Restart, then the big space wakes on its first retrieve with nothing else to do.
  await server.restart()
  const wakeAloneMs = await retrieve(lastSpace)
  // Restart again: the big space wakes on its first retrieve while another space is queried. The small space
  // is woken first (one query: it is small), then its latency is sampled while the big one wakes, then quiet.
  await server.restart()
  const rssRestarted = server.rssMb()
  await retrieve(neighbour)
  const neighbourDuring: Array<number> = []
  let waking = true
  const wake = retrieve(lastSpace).finally(() => {
    waking = false
  })
  while (waking) neighbourDuring.push(await retrieve(neighbour))
  const wakeMs = await wake
  const rssWoken = server.rssMb()
  const afterWake: Array<number> = []
  for (let i = 0; i < queries; i++) afterWake.push(await retrieve(lastSpace))
  const rssAfter = server.rssMb()
  const neighbourQuiet: Array<number> = []
  for (let i = 0; i < 100; i++) neighbourQuiet.push(await retrieve(neighbour))

  const dataBytes = dirBytes(server.dataDir)
  const wal = walBytes(server.dataDir)
  const summary = {
    turns,
    distinct_turns: Math.min(turns, items.length),
    turn_chars: turnChars,
    text_mb: mb(textChars),
    spaces: Math.ceil(turns / spaceTurns),
    memories_in_queried_space: memories,
    ...stored,
    retrieve_p50_ms: ms(percentile(quiet, 50)),
    retrieve_p95_ms: ms(percentile(quiet, 95)),
    wake_alone_first_retrieve_ms: ms(wakeAloneMs),
    wake_first_retrieve_ms: ms(wakeMs),
    neighbour_quiet_p95_ms: ms(percentile(neighbourQuiet, 95)),
    neighbour_waking_p95_ms: neighbourDuring.length === 0 ? null : ms(percentile(neighbourDuring, 95)),
    neighbour_waking_max_ms: neighbourDuring.length === 0 ? null : ms(Math.max(...neighbourDuring)),
    neighbour_waking_queries: neighbourDuring.length,
    retrieve_after_wake_p95_ms: ms(percentile(afterWake, 95)),
    rss_serving_mb: Math.round(rssServing),
    rss_restarted_mb: Math.round(rssRestarted),
    rss_woken_mb: Math.round(rssWoken),
    rss_after_queries_mb: Math.round(rssAfter),
    data_dir_mb: mb(dataBytes),
    wal_mb: mb(wal),
    data_dir_per_text: Number((dataBytes / textChars).toFixed(2))
  }
  console.log([
    `${turns} real turns of about ${turnChars} characters (${summary.distinct_turns} distinct, ${summary.text_mb} MB of text) in ${summary.spaces} space(s); ${memories} memories in the queried space`,
    stored.turns_per_s === null ? "stored earlier (--data-dir)" :
      `stored: first ${stored.first_turns} turns ${stored.first_turns_per_s} turns/s (${stored.first_cpu_ms_per_turn} ms CPU/turn); ` +
      `all ${stored.turns_per_s} turns/s (${stored.cpu_ms_per_turn} ms CPU/turn); retrieve while storing p50 ${stored.storing_retrieve_p50_ms} ms, p95 ${stored.storing_retrieve_p95_ms} ms (${stored.storing_queries} queries)`,
    `retrieve quiet p50 ${summary.retrieve_p50_ms} ms, p95 ${summary.retrieve_p95_ms} ms; after the wake p95 ${summary.retrieve_after_wake_p95_ms} ms`,
    `wake (first retrieve after a restart) alone ${summary.wake_alone_first_retrieve_ms} ms; ` +
      `while another space is queried ${summary.wake_first_retrieve_ms} ms, that space meanwhile p95 ${summary.neighbour_waking_p95_ms} ms, max ${summary.neighbour_waking_max_ms} ms ` +
      `(${summary.neighbour_waking_queries} queries; quiet p95 ${summary.neighbour_quiet_p95_ms} ms)`,
    `RSS serving ${summary.rss_serving_mb} MB, restarted ${summary.rss_restarted_mb} MB, woken ${summary.rss_woken_mb} MB, after queries ${summary.rss_after_queries_mb} MB`,
    `DATA_DIR ${summary.data_dir_mb} MB (WAL ${summary.wal_mb} MB), ${summary.data_dir_per_text}x the text`
  ].join("\n"))
  if (asJson) console.log(JSON.stringify(summary))
} finally {
  await server.stop()
}
