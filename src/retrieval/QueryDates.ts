/** Time spans a query names ("in May 2023", "last year", "yesterday"), resolved against a reference time. */
import { speaksOfFuture } from "../ingestion/RelativeDates.ts"

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
const DAY = 86_400_000

export interface Span {
  readonly start: number
  readonly end: number
  /**
   * Set on a month named without its year ("in June"): the nearest such month
   * resolved against the reference, which `settleSpans` may move a whole number
   * of years further back (ahead, for +1) to where a space's memories are.
   */
  readonly away?: -1 | 1
}

const monthSpan = (year: number, month: number): Span => ({
  start: Date.UTC(year, month, 1),
  end: Date.UTC(year, month + 1, 1) - 1
})

/**
 * A day written out in full ("on 9 November, 2022") is that day and the week
 * before it: what was said that day ("last Friday I...") may have happened
 * days earlier, and an event's day may sit a day either side of its telling.
 * Three days before ranked below seven on the dev file; fourteen no better.
 */
const DAYS_BEFORE = 7
const DAYS_AFTER = 1
const MONTH_NAMES = MONTHS.join("|")
const DAY_MONTH_YEAR = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)? (${MONTH_NAMES}),? ?((?:19|20)\\d{2})\\b`, "g")
const MONTH_DAY_YEAR = new RegExp(`\\b(${MONTH_NAMES}) (\\d{1,2})(?:st|nd|rd|th)?,? ?((?:19|20)\\d{2})\\b`, "g")

/** The days a (lower-cased) query writes out in full: "9 November, 2022", "October 13, 2023", "8th December, 2023". */
const fullDates = (text: string): Array<{ readonly time: number; readonly month: number }> => {
  const found: Array<{ time: number; month: number }> = []
  const add = (day: number, month: number, year: number) => {
    if (day >= 1 && day <= 31) found.push({ time: Date.UTC(year, month, day), month })
  }
  for (const m of text.matchAll(DAY_MONTH_YEAR)) add(Number(m[1]), MONTHS.indexOf(m[2]!), Number(m[3]))
  for (const m of text.matchAll(MONTH_DAY_YEAR)) add(Number(m[2]), MONTHS.indexOf(m[1]!), Number(m[3]))
  return found
}

export const queryDates = (query: string, reference: number | undefined): Array<Span> => {
  const text = query.toLowerCase()
  const spans: Array<Span> = []
  // The service always passes its Clock's time (or the recall's query_time); the engine's own scripts may leave it out.
  const now = reference ?? Date.now()
  const refDate = new Date(now)
  const years = [...text.matchAll(/\b(19\d{2}|20\d{2})\b/g)].map((m) => Number(m[1]))
  const monthHits = MONTHS.map((name, index) => ({ name, index })).filter(({ name }) =>
    new RegExp(`\\b${name}\\b`).test(text) && !(name === "may" && !/\bin may\b|\bmay \d|\bmay,? (19|20)\d{2}|\bof may\b|\blast may\b/.test(text))
  )
  const days = fullDates(text)
  for (const day of days) spans.push({ start: day.time - DAYS_BEFORE * DAY, end: day.time + (1 + DAYS_AFTER) * DAY - 1 })
  const future = speaksOfFuture(query)
  for (const { index } of monthHits) {
    if (days.some((day) => day.month === index)) continue
    if (years.length > 0) for (const year of years) spans.push(monthSpan(year, index))
    else {
      // As a written month resolves (RelativeDates): the next one for what is still to come, else the last.
      const current = refDate.getUTCMonth()
      const year = future
        ? (index >= current ? refDate.getUTCFullYear() : refDate.getUTCFullYear() + 1)
        : (index <= current ? refDate.getUTCFullYear() : refDate.getUTCFullYear() - 1)
      spans.push({ ...monthSpan(year, index), away: future ? 1 : -1 })
    }
  }
  if (monthHits.length === 0) for (const year of years) spans.push({ start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) - 1 })
  if (reference !== undefined) {
    if (/\byesterday\b/.test(text)) spans.push({ start: now - 2 * DAY, end: now })
    if (/\blast week\b/.test(text)) spans.push({ start: now - 14 * DAY, end: now - 3 * DAY })
    if (/\blast month\b/.test(text)) {
      const m = refDate.getUTCMonth() === 0 ? 11 : refDate.getUTCMonth() - 1
      const y = refDate.getUTCMonth() === 0 ? refDate.getUTCFullYear() - 1 : refDate.getUTCFullYear()
      spans.push(monthSpan(y, m))
    }
    if (/\blast year\b/.test(text)) {
      const y = refDate.getUTCFullYear() - 1
      spans.push({ start: Date.UTC(y, 0, 1), end: Date.UTC(y + 1, 0, 1) - 1 })
    }
  }
  return spans
}

/** How many years a year-free month may move (a space's memories rarely span more). */
const YEARS_AWAY = 50

/**
 * The spans to rank by, given the times of the memories a query ranks: a month
 * named without its year moves, a year at a time away from the reference, to
 * the first such month that holds one of those times ("camping in June", asked
 * in 2026 of a space written in 2023, is June 2023); where none does, it stays.
 */
export const settleSpans = (spans: ReadonlyArray<Span>, times: ReadonlyArray<number>): Array<Span> =>
  spans.map((span) => {
    if (span.away === undefined) return span
    const start = new Date(span.start)
    for (let years = 0; years <= YEARS_AWAY; years++) {
      const year = start.getUTCFullYear() + span.away * years
      const moved = monthSpan(year, start.getUTCMonth())
      if (times.some((t) => t >= moved.start && t <= moved.end)) return moved
    }
    return span
  })
