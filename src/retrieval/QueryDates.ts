/** Time spans a query names ("in May 2023", "last year", "yesterday"), resolved against a reference time. */
import { speaksOfFuture } from "../ingestion/RelativeDates.ts"

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
const DAY = 86_400_000

export interface Span {
  readonly start: number
  readonly end: number
}

const monthSpan = (year: number, month: number): Span => ({
  start: Date.UTC(year, month, 1),
  end: Date.UTC(year, month + 1, 1) - 1
})

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
  for (const { index } of monthHits) {
    if (years.length > 0) for (const year of years) spans.push(monthSpan(year, index))
    else {
      // As a written month resolves (RelativeDates): the next one for what is still to come, else the last.
      const current = refDate.getUTCMonth()
      const year = speaksOfFuture(query)
        ? (index >= current ? refDate.getUTCFullYear() : refDate.getUTCFullYear() + 1)
        : (index <= current ? refDate.getUTCFullYear() : refDate.getUTCFullYear() - 1)
      spans.push(monthSpan(year, index))
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
