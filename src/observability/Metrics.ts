/**
 * The node's metrics, for operators: Effect's own metrics (counters, gauges
 * and histograms in the process's registry), rendered in the Prometheus text
 * format by `GET /metrics` on METRICS_PORT (`MetricsApp`).
 *
 * A node's own: its HTTP requests, the spaces awake on it, their wakes, the
 * queued items its spaces are storing (`state="processing"`), its process.
 * Read from the store at each scrape, so the same on every node of a cluster:
 * the items still queued, the age of the oldest, the facts waiting for
 * consolidation and the webhook deliveries not yet done.
 */
import { Effect, Metric, MetricBoundaries, MetricLabel, MetricState } from "effect"
import type { MetricPair } from "effect/MetricPair"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { OperationsRepo } from "../../services/store/OperationsRepo.ts"

/** Seconds, from a millisecond to about a minute, doubling. */
const SECONDS = MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 17 })

export const httpRequests = Metric.counter("engram_http_requests_total", {
  description: "HTTP requests answered, by method, route (the API's path template) and status"
})
export const httpRequestSeconds = Metric.histogram(
  "engram_http_request_duration_seconds",
  SECONDS,
  "Time from a request's arrival to its answer, by route"
)

/** Counts one answered request; `route` is its template (`/v1/spaces/:space_id`), never the concrete path. */
export const recordRequest = (method: string, route: string, status: number, seconds: number) =>
  Effect.zipRight(
    Metric.increment(Metric.taggedWithLabels(httpRequests, [MetricLabel.make("method", method), MetricLabel.make("route", route), MetricLabel.make("status", String(status))])),
    Metric.update(Metric.tagged(httpRequestSeconds, "route", route), seconds)
  )

export const spacesAwake = Metric.gauge("engram_spaces_awake", { description: "Space entities on this node holding their index in memory" })

export const spaceWakeSeconds = Metric.histogram(
  "engram_space_wake_seconds",
  SECONDS,
  "Time a space took to wake: its index read from its snapshot or the store"
)

const queueItems = Metric.gauge("engram_queue_items", { description: "Items of queued writes: queued in the store, or being stored by this node's spaces" })
/** Queued items a drain step of this node holds, from taking them to storing them. */
export const queueProcessing = Metric.tagged(queueItems, "state", "processing")
const queueQueued = Metric.tagged(queueItems, "state", "queued")
const drainLag = Metric.gauge("engram_drain_lag_seconds", { description: "Age of the oldest queued item (0 when none waits)" })
const pendingFacts = Metric.gauge("engram_consolidation_pending_facts", { description: "Active facts not yet consolidated into a note" })
const deliveriesPending = Metric.gauge("engram_webhook_deliveries_pending", { description: "Webhook deliveries pending or being attempted" })

const residentMemory = Metric.gauge("process_resident_memory_bytes", { description: "Resident memory of the node's process" })
const heapUsed = Metric.gauge("nodejs_heap_used_bytes", { description: "V8 heap in use" })
const cpuSeconds = Metric.counter("process_cpu_seconds_total", { description: "User and system CPU time of the process" })
const startTime = Metric.gauge("process_start_time_seconds", { description: "When the process started, in seconds since the epoch" })
const loopLag = Metric.gauge("nodejs_eventloop_lag_seconds", { description: "Mean event loop delay since the last scrape" })
const loopLagMax = Metric.gauge("nodejs_eventloop_lag_max_seconds", { description: "Longest event loop delay since the last scrape" })

/** A label value as the text format writes it. */
const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, "\\\"").replace(/\n/g, "\\n")

const labels = (tags: ReadonlyArray<{ readonly key: string; readonly value: string }>, extra?: readonly [string, string]) => {
  const all = [...tags.map((t) => [t.key, t.value] as const), ...(extra === undefined ? [] : [extra])]
  return all.length === 0 ? "" : `{${all.map(([k, v]) => `${k}="${escape(v)}"`).join(",")}}`
}

const number = (value: number | bigint) => {
  const n = Number(value)
  return Number.isNaN(n) ? "NaN" : n === Infinity ? "+Inf" : n === -Infinity ? "-Inf" : String(n)
}

/** Every metric of the registry in the Prometheus text format (version 0.0.4), one family per name. */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.Untyped>): string => {
  const families = new Map<string, { type: string; help: string; lines: Array<string> }>()
  for (const { metricKey: key, metricState: state } of [...pairs].sort((a, b) => a.metricKey.name.localeCompare(b.metricKey.name))) {
    const name = key.name
    const lines: Array<string> = []
    let type: string
    if (MetricState.isCounterState(state)) {
      type = "counter"
      lines.push(`${name}${labels(key.tags)} ${number(state.count)}`)
    } else if (MetricState.isGaugeState(state)) {
      type = "gauge"
      lines.push(`${name}${labels(key.tags)} ${number(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      type = "histogram"
      // Effect's buckets are cumulative already, and end at +Inf.
      for (const [bound, count] of state.buckets) lines.push(`${name}_bucket${labels(key.tags, ["le", number(bound)])} ${count}`)
      if (!state.buckets.some(([bound]) => bound === Infinity)) lines.push(`${name}_bucket${labels(key.tags, ["le", "+Inf"])} ${state.count}`)
      lines.push(`${name}_sum${labels(key.tags)} ${number(state.sum)}`, `${name}_count${labels(key.tags)} ${state.count}`)
    } else {
      continue // no frequency or summary metrics are kept
    }
    const family = families.get(name) ?? { type, help: key.description._tag === "Some" ? key.description.value : name, lines: [] }
    family.lines.push(...lines)
    families.set(name, family)
  }
  return [...families].map(([name, f]) => `# HELP ${name} ${f.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${name} ${f.type}\n${f.lines.join("\n")}\n`).join("")
}

/**
 * The scrape: the store's gauges and the process's figures are read now,
 * then the whole registry is rendered. The event loop's delay is measured
 * between scrapes (the monitor runs for the scope).
 */
export const makeScrape = Effect.gen(function*() {
  const operations = yield* OperationsRepo
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  yield* Effect.addFinalizer(() => Effect.sync(() => delay.disable()))
  let cpuSeen = 0
  // The node's own series are there from the first scrape, at zero, before anything happened.
  yield* Metric.incrementBy(spacesAwake, 0)
  yield* Metric.incrementBy(queueProcessing, 0)
  yield* Metric.value(spaceWakeSeconds)
  yield* Metric.set(startTime, Math.round(performance.timeOrigin / 1000))
  return Effect.gen(function*() {
    const gauges = yield* operations.gauges
    const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    yield* Metric.set(queueQueued, gauges.queued)
    yield* Metric.set(drainLag, gauges.oldestQueued === null ? 0 : Math.max(0, (now - gauges.oldestQueued.getTime()) / 1000))
    yield* Metric.set(pendingFacts, gauges.pendingFacts)
    yield* Metric.set(deliveriesPending, gauges.deliveriesPending)
    const memory = process.memoryUsage()
    yield* Metric.set(residentMemory, memory.rss)
    yield* Metric.set(heapUsed, memory.heapUsed)
    const cpu = process.cpuUsage()
    const cpuTotal = (cpu.user + cpu.system) / 1e6
    yield* Metric.incrementBy(cpuSeconds, Math.max(0, cpuTotal - cpuSeen))
    cpuSeen = cpuTotal
    // Before any delay was sampled the histogram's mean is NaN: no delay measured yet.
    yield* Metric.set(loopLag, Number.isNaN(delay.mean) ? 0 : delay.mean / 1e9)
    yield* Metric.set(loopLagMax, delay.count === 0 ? 0 : delay.max / 1e9)
    delay.reset()
    return renderPrometheus(yield* Metric.snapshot)
  })
})
