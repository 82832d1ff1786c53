/**
 * `npm run bench:scale -- --memories N [--queries Q] [--text synthetic|vocabulary] [--names K] [--turn-chars C] [--single async|sync] [--warm] [--json]`: retrieve latency
 * (p50/p95, query embedding included) and server RSS for one space of N
 * generated memories on the embedded default: while consolidation works
 * through them (from its first run until none is pending), then settled;
 * the entity graph's latency (`GET .../graph`, the whole graph and a filtered
 * one); then, after a restart, the first retrieve (the space waking) and RSS.
 * `--text vocabulary` writes sentences of a real vocabulary instead of the
 * default synthetic ones (a few dozen words): words drawn Zipf-like from the
 * word vectors' 100,000 most frequent, with tens of thousands of invented
 * people, places and dates at the rates of real chat turns (VocabularyText.ts),
 * and asks questions naming the frequent people; the default `--text synthetic`
 * is the text below.
 * `--names K` writes memories that name two of K distinct invented people
 * and a place each (a graph of thousands of entities and edges) instead of
 * the default sentences, whose few first names mostly open the sentence
 * (synthetic text only).
 * `--turn-chars C` writes chat turns of about C characters each (several
 * sentences, as an assistant writes them; with `--text vocabulary`, after a
 * "Name: " speaker label as stored chat turns have) instead of one sentence
 * per item; a space of about 500 such turns is what long-turn chats produce.
 * `--single async` sends one write per request (`POST /v1/record` with
 * `"async": true`), each once the one before was answered, as a chat proxy or
 * an agent writes; `--single sync` waits for each write's memories instead.
 * Storing is reported as items per second (wall clock) and as the server's
 * CPU time per item, which other work on a busy machine moves much less.
 * By default the node is fresh: its first write starts the extraction worker
 * (compromise loaded, its code not yet optimised). `--warm` first stores 100
 * items in another space, as a node that wrote in the last half minute has
 * its worker running, so the figure is of storing alone.
 * `--data-dir DIR` keeps the store: a second run on it finds the space
 * stored, skips storing and measures the rest (a million memories take an
 * hour to store on a 2-core machine, their wake seconds).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { arg, directoryBytes, percentile, startBenchServer } from "./BenchServer.ts"
import { vocabularyText } from "./VocabularyText.ts"

const total = Number(arg("--memories", "10000"))
const queries = Number(arg("--queries", "200"))
const asJson = process.argv.includes("--json")

const NAMES = ["Ava", "Ben", "Caro", "Dev", "Elif", "Farid", "Gina", "Hugo", "Ines", "Jon", "Kemal", "Lena", "Maya", "Nate", "Omar", "Priya"]
const VERBS = ["visited", "painted", "adopted", "repaired", "studied", "cooked", "photographed", "sold", "bought", "planned", "wrote about", "taught"]
const THINGS = ["a lighthouse", "the old bridge", "a rescue dog", "vintage bicycles", "Roman history", "lentil soup", "the night market", "handmade scarves",
  "a sailing boat", "a road trip", "jazz records", "pottery", "the marathon", "a community garden", "chess openings", "mountain trails"]
const PLACES = ["in Lisbon", "near Oslo", "in Quito", "by the lake", "in the city", "at the festival", "with friends", "after work", "last summer", "in Kyoto"]
let seed = 42
const pick = <A>(xs: ReadonlyArray<A>) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return xs[seed % xs.length]!
}
const names = Number(arg("--names", "0"))
const SYLLABLES = ["ka", "lo", "ren", "vi", "sta", "mor", "eli", "du", "fen", "ga", "tho", "ri", "ban", "sel", "quo", "nar", "pe", "zul"]
const capital = (word: string) => word[0]!.toUpperCase() + word.slice(1)
/** The i-th invented person: two capitalised invented words, distinct for every i below 18^4. */
const person = (i: number) => {
  const s = (k: number) => SYLLABLES[Math.floor(i / 18 ** k) % 18]!
  return `${capital(s(0) + s(1))} ${capital(s(2) + s(3) + "ton")}`
}
const sentence = () =>
  names > 0
    ? `Yesterday ${pick(NAMES)} met ${person(nextIndex())} and ` +
      `${person(nextIndex())} ${pick(PLACES)} to talk about ${pick(THINGS)}.`
    : `${pick(NAMES)} ${pick(VERBS)} ${pick(THINGS)} ${pick(PLACES)}.`
const turnChars = Number(arg("--turn-chars", "0"))
/** `--single async|sync`: one write per request (`POST /v1/record`, queued or answered with its memories) instead of batches of 100. */
const singleArg = arg("--single", "")
if (singleArg !== "" && singleArg !== "async" && singleArg !== "sync") throw new Error("--single takes async or sync")
const single = singleArg === "async" || singleArg === "sync" ? singleArg : null
const OPENERS = ["Sure, here is what I found.", "Good question.", "Let me walk through it.", "Here is a summary of what we discussed.",
  "Thanks for the details.", "That makes sense."]
const DETAILS = ["The weather there is usually mild in spring, so the mornings are the best time to go.",
  "It took about three hours, including a long break for lunch at a small cafe.",
  "The budget came to roughly four hundred dollars, most of it for tickets and the room.",
  "A friend recommended it last month, and the reviews were mostly positive.",
  "The first attempt did not go well, but the second one worked out much better.",
  "If you want, I can put together a checklist for next time.",
  "Keep in mind that the opening hours change on public holidays.",
  "Most people find the second half more interesting than the first.",
  "You mentioned earlier that you prefer quiet places, so this might suit you.",
  "The instructor said practice every other day matters more than long sessions."]
/** An assistant-style turn of about `turnChars` characters: an opener, facts about people, and filler detail. */
const turn = () => {
  const parts = [pick(OPENERS)]
  let length = parts[0]!.length
  while (length < turnChars) {
    const next = pick([0, 1, 2]) === 0 ? pick(DETAILS) : `${pick(NAMES)} ${pick(VERBS)} ${pick(THINGS)} ${pick(PLACES)}.`
    parts.push(next)
    length += next.length + 1
  }
  return parts.join(" ")
}
const text = arg("--text", "synthetic")
if (text !== "synthetic" && text !== "vocabulary") throw new Error("--text takes synthetic or vocabulary")
const vocabulary = text === "vocabulary" ? vocabularyText() : null
/** One item's content: a long turn with `--turn-chars`, else a sentence; vocabulary text made as it is asked for, none held. */
/** Characters of content written to the measured space (the warm-up's apart). */
let written = 0
const counted = (text: string) => {
  written += text.length
  return text
}
const content = () =>
  vocabulary !== null ? (turnChars > 0 ? vocabulary.turn(turnChars) : vocabulary.sentence()) : turnChars > 0 ? turn() : sentence()
function nextIndex() {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed % names
}

const dataDirArg = arg("--data-dir")
const server = await startBenchServer({}, dataDirArg === undefined ? {} : { dataDir: dataDirArg })
/**
 * The server's CPU time so far (user and system, all threads) in ms, from
 * /proc (Linux, clock ticks of 10 ms): a figure a busy machine moves less
 * than the wall-clock rate. Null where /proc cannot be read.
 */
const serverCpuMs = () => {
  try {
    const fields = readFileSync(`/proc/${server.child.pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return null
  }
}
try {
  if (process.argv.includes("--warm")) {
    // A node that has stored long turns in the last half minute: its extraction worker is running and warmed.
    const items = Array.from({ length: 100 }, () => ({ content: content() }))
    await waitFor((await server.call("POST", "/v1/record/batch", { space_id: "warm-up", items })).job_id, "warm-up")
  }
  const existing = await server.call("GET", "/v1/spaces/scale/memories?limit=1").then((r) => r.total as number, () => 0)
  const started = performance.now()
  const cpuStarted = serverCpuMs()
  let jobs: Array<string> = []
  if (existing > 0) {
    if (!asJson) console.error(`${existing} memories stored earlier (--data-dir): storing skipped`)
  } else if (single !== null) {
    // One write per request, each sent once the one before was answered, as a chat proxy or an agent writes.
    for (let i = 0; i < total; i++) {
      const reply = await server.call("POST", "/v1/record", { space_id: "scale", content: counted(content()), ...(single === "async" ? { async: true } : {}) })
      if (single === "async") jobs.push(reply.job_id)
    }
  } else {
    for (let i = 0; i < total; i += 100) {
      const items = Array.from({ length: Math.min(100, total - i) }, () => ({ content: counted(content()) }))
      jobs.push((await server.call("POST", "/v1/record/batch", { space_id: "scale", items })).job_id)
      if (jobs.length >= 20) {
        await waitForAll(jobs)
        jobs = []
        if (!asJson) console.error(`${i + 100} memories stored`)
      }
    }
  }
  await waitForAll(jobs)
  const ingestSeconds = (performance.now() - started) / 1000
  // A kept store remembers how much text was written into it, for the next run's DATA_DIR ratio.
  const writtenFile = join(server.dataDir, "bench-scale-text-chars")
  if (existing > 0 && existsSync(writtenFile)) written = Number(readFileSync(writtenFile, "utf8"))
  else if (dataDirArg !== undefined) writeFileSync(writtenFile, String(written))
  const cpuStored = serverCpuMs()
  const ingestCpuMsPerItem = existing > 0 || cpuStarted === null || cpuStored === null ? null : Number(((cpuStored - cpuStarted) / total).toFixed(1))
  const query = () => (vocabulary !== null ? vocabulary.question() : `What did ${pick(NAMES)} ${pick(VERBS)} ${pick(PLACES)}?`)
  const question = () => ({ space_id: "scale", query: query(), limit: 10 })
  const timed = async () => {
    const t = performance.now()
    await server.call("POST", "/v1/retrieve", question())
    return performance.now() - t
  }
  const consolidation = () => server.call("GET", "/v1/spaces/scale/consolidation")

  // While consolidation runs: from its first run until nothing is pending (or 3,000 queries).
  let status = await consolidation()
  // CONSOLIDATION=off: nothing will run; only the settled figures are measured.
  if (!status.enabled) status = { ...status, pending_facts: 0 }
  for (let waited = 0; waited < 180_000 && status.runs.length === 0 && status.pending_facts > 0; waited += 200) {
    await new Promise((r) => setTimeout(r, 200))
    status = await consolidation()
  }
  const pendingBefore = status.pending_facts
  const during: Array<number> = []
  while (during.length < 3000 && status.pending_facts > 0) {
    for (let i = 0; i < 20; i++) during.push(await timed())
    status = await consolidation()
  }
  const consolidatedDuring = pendingBefore - status.pending_facts
  const consolidationStarted = performance.now()
  for (let waited = 0; waited < 1_800_000 && status.pending_facts > 0; waited += 1000) {
    await new Promise((r) => setTimeout(r, 1000))
    status = await consolidation()
  }
  if (!asJson) console.error(`consolidation settled ${Math.round((performance.now() - consolidationStarted) / 1000)} s after the queries`)

  const latencies: Array<number> = []
  for (let q = 0; q < queries; q++) latencies.push(await timed())
  // The graph and the entity list, as a dashboard would ask for them.
  const graphLatencies: Array<number> = []
  let graph = { total_entities: 0, total_edges: 0 }
  for (let q = 0; q < 50; q++) {
    const t = performance.now()
    graph = await server.call("GET", q % 2 === 0 ? "/v1/spaces/scale/graph" : "/v1/spaces/scale/graph?limit=50&min_count=2")
    graphLatencies.push(performance.now() - t)
  }
  const notes = await server.call("GET", "/v1/spaces/scale/memories?type=note&limit=1")
  const stored = (await server.call("GET", "/v1/spaces/scale/memories?limit=1")).total as number
  const rssServing = server.rssMb()
  // A restart, then the space wakes on its first retrieve (from its index snapshot, or from the store).
  await server.restart()
  const wakeStarted = performance.now()
  await server.call("POST", "/v1/retrieve", question())
  const wakeMs = performance.now() - wakeStarted
  const rssWoken = server.rssMb()
  const afterWake: Array<number> = []
  for (let q = 0; q < Math.min(queries, 100); q++) afterWake.push(await timed())
  const summary = {
    memories: total,
    text,
    names,
    turn_chars: turnChars,
    retrieve_p50_ms: Number(percentile(latencies, 50).toFixed(1)),
    retrieve_p95_ms: Number(percentile(latencies, 95).toFixed(1)),
    consolidating_queries: during.length,
    consolidating_retrieve_p50_ms: during.length === 0 ? null : Number(percentile(during, 50).toFixed(1)),
    consolidating_retrieve_p95_ms: during.length === 0 ? null : Number(percentile(during, 95).toFixed(1)),
    facts_consolidated_during_queries: consolidatedDuring,
    notes: notes.total,
    graph_p50_ms: Number(percentile(graphLatencies, 50).toFixed(1)),
    graph_p95_ms: Number(percentile(graphLatencies, 95).toFixed(1)),
    graph_entities: graph.total_entities,
    graph_edges: graph.total_edges,
    memories_stored: stored,
    server_rss_mb: Math.round(rssServing),
    wake_first_retrieve_ms: Math.round(wakeMs),
    rss_woken_mb: Math.round(rssWoken),
    retrieve_after_wake_p95_ms: Number(percentile(afterWake, 95).toFixed(1)),
    rss_after_wake_queries_mb: Math.round(server.rssMb()),
    data_dir_mb: Number((directoryBytes(server.dataDir) / 1048576).toFixed(1)),
    text_mb: Number((written / 1048576).toFixed(1)),
    ingest_stored_per_s: existing > 0 ? null : Number((total / ingestSeconds).toFixed(1)),
    ingest_server_cpu_ms_per_item: ingestCpuMsPerItem,
    build_seconds: Math.round(ingestSeconds),
    writes: single === null ? "batch" : single
  }
  console.log(`${total} ${turnChars > 0 ? `turns of about ${turnChars} characters` : "memories"}${vocabulary !== null ? " of vocabulary text" : ""}: retrieve p50 ${summary.retrieve_p50_ms} ms, p95 ${summary.retrieve_p95_ms} ms; ` +
    `while consolidating (${summary.consolidating_queries} queries, ${consolidatedDuring} facts consolidated meanwhile): ` +
    `p50 ${summary.consolidating_retrieve_p50_ms} ms, p95 ${summary.consolidating_retrieve_p95_ms} ms; ${summary.notes} notes; ` +
    `graph p50 ${summary.graph_p50_ms} ms, p95 ${summary.graph_p95_ms} ms (${summary.graph_entities} entities, ${summary.graph_edges} edges); ` +
    `${stored} memories; server RSS ${summary.server_rss_mb} MB; wake (first retrieve after a restart) ${summary.wake_first_retrieve_ms} ms, ` +
    `RSS ${summary.rss_woken_mb} MB woken, ${summary.rss_after_wake_queries_mb} MB after ${afterWake.length} queries (p95 ${summary.retrieve_after_wake_p95_ms} ms); DATA_DIR ${summary.data_dir_mb} MB for ${summary.text_mb} MB of text; stored ${summary.ingest_stored_per_s} ${turnChars > 0 ? "turns" : "memories"}/s ` +
    `(${single === null ? "batches of 100" : `one ${single} write per request`}, built in ${summary.build_seconds} s, ` +
    `${ingestCpuMsPerItem ?? "?"} ms of server CPU per ${turnChars > 0 ? "turn" : "memory"})`)
  if (asJson) console.log(JSON.stringify(summary))
} finally {
  await server.stop()
}

/** A space stores its jobs in order: polling one job at a time keeps the polls from competing with the writes. */
async function waitForAll(jobs: ReadonlyArray<string>) {
  for (const job of jobs) await waitFor(job)
}

async function waitFor(job: string, space = "scale") {
  for (;;) {
    const status = await server.call("GET", `/v1/spaces/${space}/jobs/${job}`)
    if (status.status !== "queued" && status.status !== "processing") return
    await new Promise((r) => setTimeout(r, 100))
  }
}
