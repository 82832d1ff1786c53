/**
 * `npm run bench:console -- [--memories N] [--runs R] [--json]`: how long each
 * page of the web console takes to show, on the embedded default with N
 * memories (10,000 by default) in one space. A fresh `engram serve`, the space
 * filled through the batch API, then Debian's Chromium (playwright-core) opens
 * each page R times from a full load: the figure is from navigation to the
 * page's heading on screen, which includes loading the script and every API
 * call the page makes. Target: under 1,000 ms for every page.
 */
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"
import { arg, jsonCaller, percentile, startBenchServer } from "./BenchServer.ts"

const total = Number(arg("--memories", "10000"))
const runs = Number(arg("--runs", "5"))
const asJson = process.argv.includes("--json")
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path))
if (CHROMIUM === undefined) throw new Error("Chromium is not installed (apt-get install chromium)")

const NAMES = ["Priya", "Tom", "Ana", "Yusuf", "Mei", "Lars", "Ines", "Kofi", "Sara", "Diego"]
const VERBS = ["visited", "talked about", "bought", "painted", "planned", "fixed", "booked", "cooked"]
const THINGS = ["a bicycle", "the garden", "a ferry ticket", "the kitchen", "a concert", "the roof", "a cello", "a tent"]
const PLACES = ["in Lisbon", "in Porto", "near Oslo", "in Nairobi", "in Kampala", "at the market", "by the lake", "in Leeds"]
let seed = 7
const pick = <A>(items: ReadonlyArray<A>) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return items[seed % items.length]!
}

const server = await startBenchServer()
try {
  const started = performance.now()
  const jobs: Array<string> = []
  for (let i = 0; i < total; i += 100) {
    const items = Array.from({ length: Math.min(100, total - i) }, () => ({ content: `${pick(NAMES)} ${pick(VERBS)} ${pick(THINGS)} ${pick(PLACES)}.` }))
    jobs.push((await server.call("POST", "/v1/record/batch", { space_id: "console", items })).job_id)
  }
  for (const job of jobs) {
    for (;;) {
      const status = await server.call("GET", `/v1/spaces/console/jobs/${job}`)
      if (status.status !== "queued" && status.status !== "processing") break
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  const built = Math.round((performance.now() - started) / 1000)
  let session = ""
  const asUser = jsonCaller(server.url, () => session)
  session = (await asUser("POST", "/auth/login", { email: "bench@example.test", password: "bench password" })).session_token

  const PAGES: ReadonlyArray<readonly [string, string]> = [
    ["spaces", "#/spaces"],
    ["memories", "#/spaces/console"],
    ["search", `#/spaces/console?${new URLSearchParams({ q: "Who visited Lisbon?" })}`],
    ["notes", "#/spaces/console/notes"],
    ["documents", "#/spaces/console/documents"],
    ["graph", "#/spaces/console/graph"],
    ["models", "#/spaces/console/models"],
    ["webhooks", "#/spaces/console/webhooks"],
    ["rules", "#/spaces/console/rules"],
    ["extraction", "#/spaces/console/extraction"],
    ["members", "#/spaces/console/members"],
    ["exports", "#/spaces/console/exports"],
    ["api keys", "#/keys"],
    ["playground", `#/playground/console?${new URLSearchParams({ q: "What did Ana book?" })}`],
    ["organization", "#/organization"]
  ]
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] })
  const rows: Array<{ page: string; median_ms: number; max_ms: number; met: boolean }> = []
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    await page.evaluate(`sessionStorage.setItem("engram.session", ${JSON.stringify(session)})`)
    for (const [name, route] of PAGES) {
      const times: Array<number> = []
      for (let i = 0; i < runs + 1; i++) {
        await page.goto("about:blank")
        const t = performance.now()
        await page.goto(`${server.url}/${route}`)
        // The heading is drawn once the page's data has arrived; the playground's results are part of its page.
        try {
          await page.locator("main h1").waitFor()
          if (name === "playground") await page.locator("ol.ranked").waitFor()
          if (name === "search") await page.locator("table.memories").waitFor()
        } catch (cause) {
          throw new Error(`the ${name} page (${route}) did not show within 30 s`, { cause })
        }
        // The first load warms the server's caches and the browser's; it is not counted.
        if (i > 0) times.push(performance.now() - t)
      }
      const median = Math.round(percentile(times, 50))
      if (!asJson) console.error(`${name}: median ${median} ms`)
      rows.push({ page: name, median_ms: median, max_ms: Math.round(Math.max(...times)), met: Math.max(...times) < 1000 })
    }
  } finally {
    await browser.close()
  }
  if (asJson) console.log(JSON.stringify({ memories: total, runs, build_seconds: built, pages: rows }))
  else {
    console.log(`web console, ${total} memories in one space (built in ${built} s), ${runs} loads per page after one warm-up:`)
    console.log("| page | median | slowest | target 1,000 ms |")
    console.log("|---|---|---|---|")
    for (const row of rows) console.log(`| ${row.page} | ${row.median_ms} ms | ${row.max_ms} ms | ${row.met ? "met" : "NOT met"} |`)
  }
} finally {
  await server.stop()
}
