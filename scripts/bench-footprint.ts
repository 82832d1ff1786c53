/**
 * `npm run bench:footprint -- [--memories 10000] [--json]`: what `npm start`
 * costs a laptop, on the embedded default, each figure beside its target.
 * - First start: a fresh data directory and models directory (the word
 *   vectors compacted, the store created): seconds to a successful /health,
 *   and the process's peak resident memory (VmHWM) by then.
 * - With N memories stored in one space: resident memory once they settle.
 * - Restart (SIGTERM, start again on the same directories): seconds to
 *   /health; resident memory idle 5 s later; then the most resident memory
 *   seen while serving 300 retrieves (sampled every 50 ms, and VmHWM).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { arg, freePort, jsonCaller, percentile } from "./BenchServer.ts"

const memories = Number(arg("--memories", "10000"))
const asJson = process.argv.includes("--json")

const dataDir = mkdtempSync(join(tmpdir(), "engram-footprint-data-"))
const modelsDir = mkdtempSync(join(tmpdir(), "engram-footprint-models-"))
const port = await freePort()
const url = `http://127.0.0.1:${port}`

const statusOf = (child: ChildProcess, field: "VmRSS" | "VmHWM") => {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
}

const start = async () => {
  const started = performance.now()
  const child = spawn(process.execPath, [join(import.meta.dirname, "..", "bin", "engram.mjs"), "serve"], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      MODELS_DIR: modelsDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warning",
      PLANS_CONFIG: join(import.meta.dirname, "bench-plans.json")
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  let peak = 0
  for (let i = 0; i < 1200; i++) {
    peak = Math.max(peak, statusOf(child, "VmHWM"))
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { child, seconds: (performance.now() - started) / 1000, peakMb: Math.max(peak, statusOf(child, "VmHWM")) }
}

const stop = async (child: ChildProcess) => {
  child.kill("SIGTERM")
  await new Promise((r) => child.once("exit", r))
}

let token = ""
const call = jsonCaller(url, () => token)

const NAMES = ["Ava", "Ben", "Caro", "Dev", "Elif", "Farid", "Gina", "Hugo", "Ines", "Jon", "Kemal", "Lena"]
const THINGS = ["a lighthouse", "the old bridge", "a rescue dog", "vintage bicycles", "lentil soup", "jazz records", "pottery", "chess openings"]
const PLACES = ["in Lisbon", "near Oslo", "by the lake", "at the festival", "with friends", "last summer", "in Kyoto"]
const sentence = (i: number) => `${NAMES[i % 12]} talked about ${THINGS[(i * 7) % 8]} ${PLACES[(i * 5) % 7]} (note ${i}).`

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

try {
  // First start: nothing on disk yet.
  const first = await start()
  const session = await call("POST", "/auth/signup", { email: "footprint@example.test", password: "bench password", org_name: "Footprint" })
  token = session.session_token
  token = (await call("POST", "/v1/api-keys", { name: "footprint", env: "test" })).raw_key
  const jobs: Array<string> = []
  for (let i = 0; i < memories; i += 100) {
    const items = Array.from({ length: Math.min(100, memories - i) }, (_, j) => ({ content: sentence(i + j) }))
    jobs.push((await call("POST", "/v1/record/batch", { space_id: "footprint", items })).job_id)
  }
  for (const job of jobs) {
    for (;;) {
      const status = await call("GET", `/v1/spaces/footprint/jobs/${job}`)
      if (status.status !== "queued" && status.status !== "processing") break
      await sleep(200)
    }
  }
  for (let waited = 0; waited < 600_000; waited += 1000) {
    const consolidation = await call("GET", "/v1/spaces/footprint/consolidation")
    if (!consolidation.enabled || consolidation.pending_facts === 0) break
    await sleep(1000)
  }
  await sleep(5000)
  const storedRss = statusOf(first.child, "VmRSS")
  await stop(first.child)

  // Restart on the same directories.
  const restarted = await start()
  await sleep(5000)
  const idleRss = statusOf(restarted.child, "VmRSS")
  let servingRss = 0
  const sampler = setInterval(() => (servingRss = Math.max(servingRss, statusOf(restarted.child, "VmRSS"))), 50)
  const latencies: Array<number> = []
  for (let q = 0; q < 300; q++) {
    const t = performance.now()
    await call("POST", "/v1/retrieve", { space_id: "footprint", query: `What did ${NAMES[q % 12]} say about ${THINGS[q % 8]}?`, limit: 10 })
    latencies.push(performance.now() - t)
  }
  clearInterval(sampler)
  servingRss = Math.max(servingRss, statusOf(restarted.child, "VmRSS"))
  const servingPeak = statusOf(restarted.child, "VmHWM")
  await stop(restarted.child)

  const round = (n: number) => Math.round(n * 10) / 10
  const rows = [
    { figure: "first start: seconds to /health", value: round(first.seconds), target: 20 },
    { figure: "first start: peak resident MB", value: Math.round(first.peakMb), target: 700 },
    { figure: `resident MB with ${memories} memories stored`, value: Math.round(storedRss), target: null },
    { figure: "restart: seconds to /health", value: round(restarted.seconds), target: 3 },
    { figure: "restart: resident MB idle", value: Math.round(idleRss), target: 400 },
    { figure: "restart: resident MB serving retrieves (max sampled)", value: Math.round(servingRss), target: 500 },
    { figure: "restart: peak resident MB (VmHWM) after the retrieves", value: Math.round(servingPeak), target: null },
    { figure: "retrieve p95 ms during that load", value: round(percentile(latencies, 95)), target: null }
  ]
  console.log("| figure | measured | target | met |\n|---|---|---|---|")
  for (const row of rows) {
    const met = row.target === null ? "" : row.value <= row.target ? "yes" : "no"
    console.log(`| ${row.figure} | ${row.value} | ${row.target === null ? "" : `<= ${row.target}`} | ${met} |`)
  }
  if (asJson) console.log(JSON.stringify(rows))
} finally {
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(modelsDir, { recursive: true, force: true })
}
