/**
 * `npm run bench:churn -- [--live 5000] [--rounds 10] [--churn 1000] [--data FILE] [--json]`:
 * does the embedded store's DATA_DIR stop growing under churn at constant
 * live data? One `engram serve` (embedded default, consolidation off so that
 * the live set is what the bench writes) is given `--live` memories of real
 * conversation (turns of the dev conversations, in batches), then `--rounds`
 * rounds of `--churn` edits (PATCH to another turn's text), `--churn`
 * deletes and writes back to the same number of live memories. After the
 * first writes and after each round, once writes pause and the store's
 * maintenance has run, it prints DATA_DIR's size and its ratio to the size
 * after the first writes. Target: at most 1.5x after the last round.
 * Every delete and edit is an erasure: the store's erasure passes run
 * during the rounds, so their cost is in the rounds' times.
 */
import { readFileSync } from "node:fs"
import { parseLocomo } from "../src/retrieval/LocomoEval.ts"
import { arg, directoryBytes, startBenchServer } from "./BenchServer.ts"

const live = Number(arg("--live", "5000"))
const rounds = Number(arg("--rounds", "10"))
const churn = Number(arg("--churn", "1000"))
const asJson = process.argv.includes("--json")
const TARGET = 1.5

const conversations = parseLocomo(JSON.parse(readFileSync(arg("--data", "../shared/bench/locomo-dev.json")!, "utf8")))
const turns = conversations.flatMap((c) => c.turns.map((t) => t.content))
let nextTurn = 0
const turn = () => turns[nextTurn++ % turns.length]!

const server = await startBenchServer({ CONSOLIDATION: "off" })
const SPACE = "churn"
const mb = (bytes: number) => Math.round((bytes / (1 << 20)) * 10) / 10

/** A delete answers 204 with no body. */
const remove = async (id: string) => {
  const response = await fetch(`${server.url}/v1/spaces/${SPACE}/memories/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${server.key}` } })
  if (response.status !== 204) throw new Error(`DELETE memory ${id}: ${response.status} ${await response.text()}`)
}

const pool = async <A>(items: ReadonlyArray<A>, work: (item: A) => Promise<unknown>, concurrency = 4) => {
  let at = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (at < items.length) await work(items[at++]!)
  }))
}

/** Writes `count` turns in batches of 100 and waits for their jobs. */
const write = async (count: number) => {
  const jobs: Array<string> = []
  for (let done = 0; done < count; done += 100) {
    const items = Array.from({ length: Math.min(100, count - done) }, () => ({ content: turn() }))
    jobs.push((await server.call("POST", "/v1/record/batch", { space_id: SPACE, items })).job_id)
  }
  for (const job of jobs) {
    for (;;) {
      const status = (await server.call("GET", `/v1/spaces/${SPACE}/jobs/${job}`)).status
      if (status === "completed" || status === "failed") break
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

/** Every live memory's id. */
const ids = async () => {
  const out: Array<string> = []
  for (let offset = 0; ; offset += 100) {
    const page = await server.call("GET", `/v1/spaces/${SPACE}/memories?limit=100&offset=${offset}`)
    out.push(...page.items.map((m: { id: string }) => m.id))
    if (page.items.length < 100) return out
  }
}

/** DATA_DIR's size once writes have paused long enough for maintenance (and any erasure pass) to finish: stable for 10 s. */
const settledSize = async () => {
  let last = -1
  let stableSince = Date.now()
  for (;;) {
    await new Promise((r) => setTimeout(r, 2_000))
    const size = directoryBytes(server.dataDir)
    if (size !== last) {
      last = size
      stableSince = Date.now()
    } else if (Date.now() - stableSince >= 10_000) return size
  }
}

/** Writes until the space holds `target` live memories again (a turn may make more than one). */
const refill = async (target: number) => {
  for (let have = (await ids()).length; have < target; have = (await ids()).length) await write(Math.min(churn, target - have))
}

const started = Date.now()
await server.call("POST", "/v1/spaces", { space_id: SPACE, name: "Churn" })
await refill(live)
// A turn may make several memories: the live set is what the first writes made, and stays that size.
const liveCount = (await ids()).length
const first = await settledSize()
const curve: Array<{ round: number; mb: number; ratio: number; seconds: number }> = [{ round: 0, mb: mb(first), ratio: 1, seconds: Math.round((Date.now() - started) / 1000) }]
if (!asJson) console.log(`round 0: ${liveCount} live memories, DATA_DIR ${mb(first)} MB`)
for (let round = 1; round <= rounds; round++) {
  const began = Date.now()
  const current = await ids()
  const shuffled = [...current].sort(() => Math.random() - 0.5)
  await pool(shuffled.slice(0, churn), (id) => server.call("PATCH", `/v1/spaces/${SPACE}/memories/${id}`, { text: turn() }))
  await pool(shuffled.slice(churn, 2 * churn), remove)
  await refill(liveCount)
  // Back to the live size exactly: a refill's last turn may have made one memory too many.
  const over = (await ids()).slice(liveCount)
  await pool(over, remove)
  const seconds = Math.round((Date.now() - began) / 1000)
  const size = await settledSize()
  curve.push({ round, mb: mb(size), ratio: Math.round((size / first) * 100) / 100, seconds })
  if (!asJson) console.log(`round ${round}: ${churn} edits, ${churn} deletes, ${churn}+ writes in ${seconds} s; DATA_DIR ${mb(size)} MB (${(size / first).toFixed(2)}x)`)
}
await server.stop()
const last = curve[curve.length - 1]!
if (!asJson) console.log(`after ${rounds} rounds: ${last.ratio}x the size after the first writes (target <= ${TARGET}x): ${last.ratio <= TARGET ? "met" : "NOT met"}`)
console.log(JSON.stringify({ live: liveCount, rounds, churn, first_mb: mb(first), last_mb: last.mb, ratio: last.ratio, target: TARGET, curve }))
