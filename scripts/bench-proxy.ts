/**
 * `npm run bench:proxy -- [--memories 1000] [--calls 200] [--no-record] [--json]`:
 * the latency the memory wrapper adds to a chat completion (recall, injection,
 * recording the turn) over calling the same upstream directly. The upstream is
 * an instant OpenAI-compatible stand-in in this process; Engram runs as a real
 * `engram serve` on the embedded default with N memories in the space.
 */
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { arg, percentile, startBenchServer } from "./BenchServer.ts"

const memories = Number(arg("--memories", "1000"))
const calls = Number(arg("--calls", "200"))
const record = !process.argv.includes("--no-record")
const asJson = process.argv.includes("--json")

const upstream = createServer((req, res) => {
  let raw = ""
  req.on("data", (chunk) => (raw += chunk))
  req.on("end", () => {
    const body = JSON.parse(raw)
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      id: "bench",
      object: "chat.completion",
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: "Noted, thank you." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 }
    }))
  })
})
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`
const catalog = join(tmpdir(), `engram-bench-models-${process.pid}.json`)
writeFileSync(catalog, JSON.stringify({
  models: [{
    id: "bench/upstream-1",
    provider: "openai",
    base_url: upstreamUrl,
    credits_per_1k_input: 1,
    credits_per_1k_output: 1,
    requests_per_minute: 1_000_000,
    aliases: ["balanced"]
  }]
}))

const NAMES = ["Ava", "Ben", "Caro", "Dev", "Elif", "Farid", "Gina", "Hugo"]
const THINGS = ["a lighthouse", "the old bridge", "a rescue dog", "vintage bicycles", "lentil soup", "jazz records", "pottery", "chess openings"]
const PLACES = ["in Lisbon", "near Oslo", "by the lake", "at the festival", "with friends", "last summer"]
const sentence = (i: number) => `${NAMES[i % 8]} talked about ${THINGS[(i * 7) % 8]} ${PLACES[(i * 5) % 6]} (note ${i}).`
const question = (i: number) => `What do you remember about ${NAMES[i % 8]} and ${THINGS[(i * 3) % 8]}?`

const server = await startBenchServer({ MODELS_CONFIG: catalog })
try {
  const jobs: Array<string> = []
  for (let i = 0; i < memories; i += 100) {
    const items = Array.from({ length: Math.min(100, memories - i) }, (_, j) => ({ content: sentence(i + j) }))
    jobs.push((await server.call("POST", "/v1/record/batch", { space_id: "bench", items })).job_id)
  }
  for (const job of jobs) {
    for (;;) {
      const status = await server.call("GET", `/v1/spaces/bench/jobs/${job}`)
      if (status.status !== "queued" && status.status !== "processing") break
      await new Promise((r) => setTimeout(r, 200))
    }
  }
  const timed = async (url: string, headers: Record<string, string>, i: number) => {
    const started = performance.now()
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "bench/upstream-1", messages: [{ role: "user", content: question(i) }], max_tokens: 32 })
    })
    const body = (await response.json()) as any
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`)
    return { ms: performance.now() - started, injected: body.memories_injected as number | undefined }
  }
  const engramHeaders = {
    authorization: `Bearer ${server.key}`,
    "x-svc-space-id": "bench",
    ...(record ? {} : { "x-svc-auto-record": "false" })
  }
  const direct: Array<number> = []
  const proxied: Array<number> = []
  let injected = 0
  for (let i = 0; i < calls + 20; i++) {
    const a = await timed(`${upstreamUrl}/chat/completions`, {}, i)
    const b = await timed(`${server.url}/v1/chat/completions`, engramHeaders, i)
    if (i < 20) continue // warm-up
    direct.push(a.ms)
    proxied.push(b.ms)
    injected += b.injected ?? 0
  }
  const round = (x: number) => Number(x.toFixed(1))
  const summary = {
    memories,
    calls,
    record,
    direct_p50_ms: round(percentile(direct, 50)),
    direct_p95_ms: round(percentile(direct, 95)),
    proxied_p50_ms: round(percentile(proxied, 50)),
    proxied_p95_ms: round(percentile(proxied, 95)),
    added_p50_ms: round(percentile(proxied, 50) - percentile(direct, 50)),
    added_p95_ms: round(percentile(proxied, 95) - percentile(direct, 95)),
    memories_injected_mean: round(injected / calls)
  }
  console.log(`${memories} memories, ${calls} calls${record ? "" : " (turns not recorded)"}: direct p50 ${summary.direct_p50_ms} ms / p95 ${summary.direct_p95_ms} ms; ` +
    `through Engram p50 ${summary.proxied_p50_ms} ms / p95 ${summary.proxied_p95_ms} ms; ` +
    `added p50 ${summary.added_p50_ms} ms, p95 ${summary.added_p95_ms} ms (${summary.memories_injected_mean} memories injected per call)`)
  if (asJson) console.log(JSON.stringify(summary))
} finally {
  await server.stop()
  upstream.close()
}
