/**
 * The LoCoMo protocol shared by the benchmarks: turns as records, cleaned
 * evidence ids, and evidence recall@k / MRR per category (1-4).
 */

export interface LocomoTurn {
  readonly diaId: string
  readonly session: number
  readonly index: number
  readonly content: string
  readonly timestamp: string
}

export interface LocomoQuestion {
  readonly question: string
  readonly category: number
  readonly evidence: ReadonlyArray<string>
}

export interface LocomoConversation {
  readonly sampleId: string
  readonly turns: ReadonlyArray<LocomoTurn>
  readonly questions: ReadonlyArray<LocomoQuestion>
}

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]

/** "1:56 pm on 8 May, 2023" -> ISO 8601 (UTC). */
export const parseSessionDate = (text: string): string | null => {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(text)
  if (!m) return null
  const month = MONTHS.indexOf(m[5]!.toLowerCase())
  if (month < 0) return null
  let hour = Number(m[1]) % 12
  if (m[3]!.toLowerCase() === "pm") hour += 12
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString()
}

/** "D8:6; D9:17", "D9:1 D4:4", "D:11:26", "D30:05" -> canonical "D<n>:<m>" ids. */
export const cleanEvidence = (raw: ReadonlyArray<string>): Array<string> =>
  raw
    .flatMap((e) => e.split(/[;\s]+/))
    .map((e) => e.trim().replace(/^D:/, "D"))
    .map((e) => /^D(\d+):(\d+)$/.exec(e))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `D${Number(m[1])}:${Number(m[2])}`)

export const canonicalDiaId = (id: string) => cleanEvidence([id])[0] ?? id

export const parseLocomo = (data: ReadonlyArray<any>): Array<LocomoConversation> =>
  data.map((sample) => {
    const conversation = sample.conversation
    const turns: Array<LocomoTurn> = []
    for (let n = 1; conversation[`session_${n}`] !== undefined || conversation[`session_${n}_date_time`] !== undefined; n++) {
      const session = conversation[`session_${n}`] as Array<any> | undefined
      if (!session) continue
      const timestamp = parseSessionDate(String(conversation[`session_${n}_date_time`] ?? "")) ?? new Date(0).toISOString()
      session.forEach((turn, index) => {
        const caption = turn.blip_caption ? ` [shares a photo: ${turn.blip_caption}]` : ""
        turns.push({
          diaId: canonicalDiaId(String(turn.dia_id)),
          session: n,
          index,
          content: `${turn.speaker}: ${turn.text}${caption}`,
          timestamp
        })
      })
    }
    const known = new Set(turns.map((t) => t.diaId))
    const questions = (sample.qa as Array<any>)
      .filter((q) => q.category >= 1 && q.category <= 4)
      .map((q) => ({ question: String(q.question), category: Number(q.category), evidence: cleanEvidence(q.evidence ?? []).filter((e) => known.has(e)) }))
      .filter((q) => q.evidence.length > 0)
    return { sampleId: String(sample.sample_id), turns, questions }
  })

export interface Metrics {
  questions: number
  r5: number
  r10: number
  r20: number
  mrr: number
}

const empty = (): Metrics => ({ questions: 0, r5: 0, r10: 0, r20: 0, mrr: 0 })

/** Accumulates recall@k (fraction of evidence turns among the first k distinct turns) and MRR. */
export class RecallMeter {
  readonly byCategory = new Map<number, Metrics>()
  readonly overall = empty()

  add(category: number, evidence: ReadonlyArray<string>, rankedDiaIds: ReadonlyArray<string>) {
    const distinct: Array<string> = []
    for (const id of rankedDiaIds) if (!distinct.includes(id)) distinct.push(id)
    const wanted = new Set(evidence)
    const recallAt = (k: number) => distinct.slice(0, k).filter((id) => wanted.has(id)).length / wanted.size
    const first = distinct.findIndex((id) => wanted.has(id))
    const sample = { r5: recallAt(5), r10: recallAt(10), r20: recallAt(20), mrr: first < 0 ? 0 : 1 / (first + 1) }
    for (const m of [this.overall, this.category(category)]) {
      m.questions++
      m.r5 += sample.r5
      m.r10 += sample.r10
      m.r20 += sample.r20
      m.mrr += sample.mrr
    }
  }

  private category(category: number) {
    let m = this.byCategory.get(category)
    if (!m) this.byCategory.set(category, (m = empty()))
    return m
  }

  static mean(m: Metrics) {
    const n = m.questions || 1
    return { questions: m.questions, recall_at_5: m.r5 / n, recall_at_10: m.r10 / n, recall_at_20: m.r20 / n, mrr: m.mrr / n }
  }

  table() {
    const row = (label: string, m: Metrics) => {
      const x = RecallMeter.mean(m)
      return `${label.padEnd(14)} ${String(x.questions).padStart(5)}  ${x.recall_at_5.toFixed(3)}  ${x.recall_at_10.toFixed(3)}  ${x.recall_at_20.toFixed(3)}  ${x.mrr.toFixed(3)}`
    }
    const names: Record<number, string> = { 1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop" }
    return [
      `${"category".padEnd(14)} ${"n".padStart(5)}  R@5    R@10   R@20   MRR`,
      ...[...this.byCategory.keys()].sort().map((c) => row(names[c] ?? String(c), this.byCategory.get(c)!)),
      row("overall", this.overall)
    ].join("\n")
  }
}
