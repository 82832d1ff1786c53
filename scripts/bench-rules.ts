/**
 * `npm run bench:rules -- [--items N] [--batch B] [--rounds R] [--concurrency C] [--json]`:
 * write throughput through the real HTTP API of one `engram serve` (embedded
 * default) in two spaces written with the same items: one with 10 rules
 * enabled (every built-in detector and three regexes, all redact), one with
 * none (its default rule deleted). Measured two ways, in alternating rounds
 * so both spaces grow alike and share the machine's moments: `POST
 * /v1/record` (synchronous, C at a time, N per round) and `POST
 * /v1/record/batch` (B items in calls of 100, until their jobs complete).
 * About one item in four holds something a rule redacts. Target: with 10
 * rules, under 10% slower.
 */
import { Schema } from "effect"
import { randomBytes } from "node:crypto"
import type { Rule } from "../src/domain/Rules.ts"
import { compile, screenText } from "../src/security/Screen.ts"
import { arg, jsonCaller, percentile, startBenchServer } from "./BenchServer.ts"

const perRound = Number(arg("--items", "150"))
const batchItems = Number(arg("--batch", "300"))
const rounds = Number(arg("--rounds", "3"))
const concurrency = Number(arg("--concurrency", "4"))
const asJson = process.argv.includes("--json")
const TARGET = 10

const RULES: ReadonlyArray<{ readonly name: string; readonly detector: string; readonly pattern?: string }> = [
  // The space's default api_key rule is kept: it is one of the ten.
  { name: "Emails", detector: "email" },
  { name: "Phones", detector: "phone" },
  { name: "Cards", detector: "credit_card" },
  { name: "Private keys", detector: "private_key" },
  { name: "IBANs", detector: "iban" },
  { name: "SSNs", detector: "us_ssn" },
  { name: "Tickets", detector: "regex", pattern: "TICKET-[A-Z]{3}-\\d{4,6}" },
  { name: "Invoices", detector: "regex", pattern: "\\bINV-\\d{8}\\b" },
  { name: "Projects", detector: "regex", pattern: "(?i)project[ -]?(?:falcon|osprey|heron)" }
]

// --- The data: assistant-style turns, the same for both spaces ---------------------------------

let seed = 7
const pick = <A>(xs: ReadonlyArray<A>) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return xs[seed % xs.length]!
}
const NAMES = ["Ava", "Ben", "Caro", "Dev", "Elif", "Farid", "Gina", "Hugo", "Ines", "Jon", "Kemal", "Lena", "Maya", "Nate", "Omar", "Priya"]
const FACTS = [
  "moved the team offsite to a lodge near the lake for the spring planning week",
  "switched the nightly build to run on the new runners, which cut it to twelve minutes",
  "is allergic to peanuts and always asks restaurants about their kitchen",
  "prefers morning meetings and blocks the afternoons for focused work",
  "adopted a rescue greyhound called Biscuit who now comes to the office on Fridays",
  "is learning Portuguese before the transfer to the Lisbon office next year",
  "keeps the on-call runbook in the wiki and updates it after every incident",
  "booked the quarterly review for the second Tuesday of the month"
]
const FILLER = [
  "Let me know if you want me to turn this into a checklist for next time.",
  "The budget came to roughly four hundred dollars, most of it for tickets and the room.",
  "Keep in mind that the opening hours change on public holidays.",
  "You mentioned earlier that you prefer quiet places, so this might suit you."
]
const token = () => randomBytes(30).toString("base64").replace(/[^A-Za-z0-9]/g, "").slice(0, 36)
/** Something one of the rules redacts, one kind after another. */
const SENSITIVE = [
  () => `Reach ${pick(NAMES).toLowerCase()}.ops@example.com or call +1 415 555 ${String(1000 + (seed % 9000))}.`,
  () => `The staging key is sk-ant-api03-${token()} until Friday.`,
  () => "The card on file is 4111 1111 1111 1111 and the IBAN is DE89 3704 0044 0532 0130 00.",
  () => `Her SSN is 123-45-${String(1000 + (seed % 9000))}; see TICKET-OPS-${String(10000 + (seed % 90000))} and INV-20240507.`,
  () => "Project Falcon ships in May.",
  () => `-----BEGIN PRIVATE KEY-----\n${token()}\n${token()}\n-----END PRIVATE KEY-----`
]
const item = (i: number) => {
  const parts = [`${pick(NAMES)} ${pick(FACTS)}.`, pick(FILLER), `${pick(NAMES)} ${pick(FACTS)}.`]
  if (i % 4 === 0) parts.splice(1, 0, pick(SENSITIVE)())
  return parts.join(" ")
}

// --- Measuring -------------------------------------------------------------------------------------

const Queued = Schema.decodeUnknownSync(Schema.Struct({ job_id: Schema.String }))
const JobStatus = Schema.decodeUnknownSync(Schema.Struct({ status: Schema.String }))
const RuleList = Schema.decodeUnknownSync(Schema.Struct({ items: Schema.Array(Schema.Struct({ id: Schema.String, detector: Schema.String })) }))
const Session = Schema.decodeUnknownSync(Schema.Struct({ session_token: Schema.String }))

interface Round {
  readonly perSecond: number
  readonly latencies: ReadonlyArray<number>
}

const server = await startBenchServer({ CONSOLIDATION: "off" })
try {
  // Rules are managed on a session of the owner: the bench organization signs in again.
  const session = Session(await server.call("POST", "/auth/login", { email: "bench@example.test", password: "bench password" })).session_token
  const owner = jsonCaller(server.url, () => session)
  const spaces = { none: "rules-none", ten: "rules-ten" } as const
  for (const space of Object.values(spaces)) await server.call("POST", "/v1/spaces", { space_id: space })
  for (const rule of RuleList(await owner("GET", `/v1/spaces/${spaces.none}/rules`)).items) {
    // 204, no body: not for jsonCaller.
    const deleted = await fetch(`${server.url}/v1/spaces/${spaces.none}/rules/${rule.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${session}` }
    })
    if (deleted.status !== 204) throw new Error(`DELETE rule: ${deleted.status}`)
  }
  for (const rule of RULES) await owner("POST", `/v1/spaces/${spaces.ten}/rules`, { ...rule, action: "redact" })
  const enabled = RuleList(await owner("GET", `/v1/spaces/${spaces.ten}/rules`)).items
  if (enabled.length !== 10 || RuleList(await owner("GET", `/v1/spaces/${spaces.none}/rules`)).items.length !== 0) {
    throw new Error(`expected 10 rules and none, found ${enabled.length}`)
  }

  /** N synchronous records, `concurrency` at a time. */
  const records = async (space: string, items: ReadonlyArray<string>): Promise<Round> => {
    const latencies: Array<number> = []
    let next = 0
    const started = performance.now()
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const content = items[next++]!
        const t = performance.now()
        await server.call("POST", "/v1/record", { space_id: space, content })
        latencies.push(performance.now() - t)
      }
    }))
    return { perSecond: items.length / ((performance.now() - started) / 1000), latencies }
  }

  /** Items in batches of 100, until every job has completed. */
  const batches = async (space: string, items: ReadonlyArray<string>): Promise<Round> => {
    const latencies: Array<number> = []
    const started = performance.now()
    const jobs: Array<string> = []
    for (let i = 0; i < items.length; i += 100) {
      const t = performance.now()
      const queued = Queued(await server.call("POST", "/v1/record/batch", {
        space_id: space,
        items: items.slice(i, i + 100).map((content) => ({ content }))
      }))
      latencies.push(performance.now() - t)
      jobs.push(queued.job_id)
    }
    for (const job of jobs) {
      for (;;) {
        const status = JobStatus(await server.call("GET", `/v1/spaces/${space}/jobs/${job}`)).status
        if (status === "completed") break
        if (status !== "queued" && status !== "processing") throw new Error(`job ${job} ${status}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    return { perSecond: items.length / ((performance.now() - started) / 1000), latencies }
  }

  // A warm-up round each, not counted (first writes load the space and the models).
  const warm = Array.from({ length: 20 }, (_, i) => item(i))
  await records(spaces.none, warm)
  await records(spaces.ten, warm)

  const results = { record: { none: [] as Array<Round>, ten: [] as Array<Round> }, batch: { none: [] as Array<Round>, ten: [] as Array<Round> } }
  for (let round = 0; round < rounds; round++) {
    const recordItems = Array.from({ length: perRound }, (_, i) => item(i))
    const batchData = Array.from({ length: batchItems }, (_, i) => item(i))
    // Which space goes first alternates, so neither always meets the other's leftover work.
    const order = round % 2 === 0 ? (["none", "ten"] as const) : (["ten", "none"] as const)
    for (const which of order) results.record[which].push(await records(spaces[which], recordItems))
    for (const which of order) results.batch[which].push(await batches(spaces[which], batchData))
    if (!asJson) console.error(`round ${round + 1}/${rounds} done`)
  }

  // What screening itself costs, in process, on the same items.
  const compiled = compile(RULES.concat([{ name: "Keys", detector: "api_key" }]).map((r, i): Rule => ({
    id: `rul_${i}`,
    name: r.name,
    detector: Schema.decodeUnknownSync(Schema.Literal("email", "phone", "credit_card", "api_key", "private_key", "iban", "us_ssn", "regex"))(r.detector),
    pattern: r.pattern ?? null,
    action: "redact",
    enabled: true,
    created_at: new Date().toISOString()
  })))
  const sample = Array.from({ length: 2000 }, (_, i) => item(i))
  const screenStarted = performance.now()
  for (const text of sample) screenText(compiled, text)
  const screenMicros = ((performance.now() - screenStarted) * 1000) / sample.length

  const median = (xs: ReadonlyArray<number>) => percentile(xs, 50)
  const row = (mode: "record" | "batch", which: "none" | "ten") => {
    const runs = results[mode][which]
    return {
      perSecond: median(runs.map((r) => r.perSecond)),
      p50: percentile(runs.flatMap((r) => r.latencies), 50),
      p95: percentile(runs.flatMap((r) => r.latencies), 95)
    }
  }
  // Each round's two spaces ran back to back: the slowdown is the median of the rounds' own, paired, slowdowns.
  const summary = (["record", "batch"] as const).map((mode) => {
    const none = row(mode, "none")
    const ten = row(mode, "ten")
    const perRound = results[mode].ten.map((r, i) => (1 - r.perSecond / results[mode].none[i]!.perSecond) * 100)
    return { mode, none, ten, perRound, slowdownPct: median(perRound) }
  })
  if (asJson) {
    console.log(JSON.stringify({ rounds, per_round: { record: perRound, batch: batchItems }, concurrency, screen_us_per_item: screenMicros, summary }))
  } else {
    const line = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`
    console.log(line(["write path", "rules", "items/s (median of rounds)", "p50 ms", "p95 ms", "slowdown (median of rounds)", "target"]))
    console.log(line(["---", "---:", "---:", "---:", "---:", "---:", "---"]))
    for (const s of summary) {
      const label = s.mode === "record" ? `POST /v1/record (${concurrency} at a time)` : "POST /v1/record/batch (until done)"
      console.log(line([label, "0", s.none.perSecond.toFixed(1), s.none.p50.toFixed(1), s.none.p95.toFixed(1), "", ""]))
      const verdict = s.slowdownPct < TARGET ? "met" : "MISSED"
      console.log(line([label, "10", s.ten.perSecond.toFixed(1), s.ten.p50.toFixed(1), s.ten.p95.toFixed(1), `${s.slowdownPct.toFixed(1)}%`, `< ${TARGET}% (${verdict})`]))
    }
    for (const s of summary) console.log(`\n${s.mode}: slowdown per round ${s.perRound.map((p) => `${p.toFixed(1)}%`).join(", ")}`)
    console.log(`\n${rounds} rounds of ${perRound} records and ${batchItems} batch items per space; screening alone: ${screenMicros.toFixed(0)} µs per item with the 10 rules (in process).`)
  }
} finally {
  await server.stop()
}
