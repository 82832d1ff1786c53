/**
 * `npm run bench:webhooks -- [--items N] [--writes N] [--json]`: webhook
 * delivery through a real `engram serve` (embedded default) to a local HTTPS
 * receiver (a self-signed certificate, trusted through NODE_EXTRA_CA_CERTS;
 * WEBHOOK_ALLOW_PRIVATE=1 lets it live on loopback). It measures the write
 * throughput of one space without webhooks and of another with three (the
 * difference is the cost of the outbox), both for queued batches (items
 * stored and indexed per second) and for synchronous writes (writes per
 * second, one at a time), then how fast the deliveries reach the receiver:
 * deliveries per second, and the delay from each event's timestamp to its
 * arrival (p50 / p95).
 */
import { certificate, startReceiver } from "../test/support/Receiver.ts"
import { arg, type BenchServer, percentile, startBenchServer } from "./BenchServer.ts"

const items = Number(arg("--items", "2000"))
const writes = Number(arg("--writes", "200"))
const asJson = process.argv.includes("--json")

const receiver = await startReceiver()
const server = await startBenchServer({
  CONSOLIDATION: "off",
  WEBHOOK_ALLOW_PRIVATE: "1",
  NODE_EXTRA_CA_CERTS: certificate().certFile
})

const waitForJobs = async (s: BenchServer, spaceId: string, jobs: ReadonlyArray<string>) => {
  for (const job of jobs) {
    for (;;) {
      const status = await s.call("GET", `/v1/spaces/${spaceId}/jobs/${job}`)
      if (status.status !== "queued" && status.status !== "processing") break
      await new Promise((r) => setTimeout(r, 20))
    }
  }
}

/** Queued batches of 100: items stored and indexed per second. Synchronous writes one at a time: writes per second. */
const throughput = async (spaceId: string) => {
  const started = performance.now()
  const jobs: Array<string> = []
  for (let i = 0; i < items; i += 100) {
    const batch = Array.from({ length: Math.min(100, items - i) }, (_, j) => ({
      content: `Noor logged reading number ${i + j} from greenhouse sensor ${(i + j) % 17} at the allotment.`
    }))
    jobs.push((await server.call("POST", "/v1/record/batch", { space_id: spaceId, items: batch })).job_id)
  }
  await waitForJobs(server, spaceId, jobs)
  const batchPerS = items / ((performance.now() - started) / 1000)
  const syncStarted = performance.now()
  for (let i = 0; i < writes; i++) {
    await server.call("POST", "/v1/record", { space_id: spaceId, content: `Noor watered bed ${i % 9} of the allotment on round ${i}.` })
  }
  const syncPerS = writes / ((performance.now() - syncStarted) / 1000)
  return { batchPerS, syncPerS }
}

try {
  await server.call("POST", "/v1/spaces", { space_id: "plain" })
  await server.call("POST", "/v1/spaces", { space_id: "hooked" })
  for (let i = 0; i < 3; i++) {
    await server.call("POST", "/v1/spaces/hooked/webhooks", { url: `${receiver.url}-${i}` })
  }
  // A warm-up space, so neither measured space pays for the first writes of the process.
  await throughput("warm-up")
  receiver.received.length = 0

  const plain = await throughput("plain")
  const hookedStarted = Date.now()
  const hooked = await throughput("hooked")
  const expected = 3 * (items + writes)
  const deadline = Date.now() + 600_000
  while (receiver.received.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  const delivered = receiver.received.length
  const lastArrival = Math.max(...receiver.received.map((r) => r.at))
  const delays = receiver.received.map((r) => r.at - Date.parse(r.json.timestamp))
  const summary = {
    items,
    writes,
    batch_items_per_s_without: Number(plain.batchPerS.toFixed(1)),
    batch_items_per_s_with_3_webhooks: Number(hooked.batchPerS.toFixed(1)),
    sync_writes_per_s_without: Number(plain.syncPerS.toFixed(1)),
    sync_writes_per_s_with_3_webhooks: Number(hooked.syncPerS.toFixed(1)),
    deliveries: delivered,
    deliveries_expected: expected,
    deliveries_per_s: Number((delivered / ((lastArrival - hookedStarted) / 1000)).toFixed(1)),
    delivery_delay_p50_ms: Math.round(percentile(delays, 50)),
    delivery_delay_p95_ms: Math.round(percentile(delays, 95))
  }
  if (asJson) {
    console.log(JSON.stringify(summary))
  } else {
    console.log(`queued batches: ${summary.batch_items_per_s_without} items/s without webhooks, ` +
      `${summary.batch_items_per_s_with_3_webhooks} with three`)
    console.log(`synchronous writes: ${summary.sync_writes_per_s_without} writes/s without webhooks, ` +
      `${summary.sync_writes_per_s_with_3_webhooks} with three`)
    console.log(`deliveries: ${delivered} of ${expected}, ${summary.deliveries_per_s}/s; ` +
      `event to arrival p50 ${summary.delivery_delay_p50_ms} ms, p95 ${summary.delivery_delay_p95_ms} ms`)
  }
} finally {
  await server.stop()
  await receiver.close()
}
