/**
 * How a memory's event time reads when a synthesis cites it: as precise as
 * the memory is, no more. A fact that says "in 2022" spans the whole year
 * and reads "2022", not "1 January 2022"; "last month" reads "April 2023",
 * "last week" "1–7 May 2023", and a day or an instant reads as its day.
 * Words for notes, ISO 8601 (reduced precision, or an interval) for the
 * dated lines of memory models and model prompts. UTC throughout, as event
 * times are resolved.
 */

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
const DAY = 86_400_000

type Span =
  | { readonly kind: "day"; readonly at: Date }
  | { readonly kind: "month"; readonly at: Date }
  | { readonly kind: "year"; readonly at: Date }
  | { readonly kind: "range"; readonly from: Date; readonly to: Date }

const startOfDay = (d: Date) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())

/** What an event from `start` to `end` covers: a day, a whole calendar month or year, or a range of days. */
const spanOf = (start: Date, end: Date | null): Span => {
  const from = start.getTime()
  const to = end === null ? from : Math.max(from, end.getTime())
  const y = start.getUTCFullYear()
  const m = start.getUTCMonth()
  if (startOfDay(start) === startOfDay(new Date(to))) return { kind: "day", at: start }
  if (from === Date.UTC(y, 0, 1) && to === Date.UTC(y + 1, 0, 1) - 1) return { kind: "year", at: start }
  if (from === Date.UTC(y, m, 1) && to === Date.UTC(y, m + 1, 1) - 1) return { kind: "month", at: start }
  // An end at the last instant of a day is that day, not the next.
  return { kind: "range", from: start, to: new Date(startOfDay(new Date(to)) === to ? to - DAY : to) }
}

const day = (d: Date) => `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`

/** In words: "7 May 2023", "April 2023", "2022", "1–7 May 2023", "28 April – 4 May 2023". */
export const eventLabel = (start: Date, end: Date | null): string => {
  const span = spanOf(start, end)
  switch (span.kind) {
    case "day":
      return day(span.at)
    case "month":
      return `${MONTHS[span.at.getUTCMonth()]} ${span.at.getUTCFullYear()}`
    case "year":
      return String(span.at.getUTCFullYear())
    case "range": {
      const { from, to } = span
      if (startOfDay(from) === startOfDay(to)) return day(from)
      if (from.getUTCFullYear() !== to.getUTCFullYear()) return `${day(from)} – ${day(to)}`
      if (from.getUTCMonth() !== to.getUTCMonth()) {
        return `${from.getUTCDate()} ${MONTHS[from.getUTCMonth()]} – ${day(to)}`
      }
      return `${from.getUTCDate()}–${day(to)}`
    }
  }
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10)

/** In ISO 8601: "2023-05-07", "2023-04", "2022", "2023-05-01/2023-05-07". */
export const eventIso = (start: Date, end: Date | null): string => {
  const span = spanOf(start, end)
  switch (span.kind) {
    case "day":
      return isoDay(span.at)
    case "month":
      return span.at.toISOString().slice(0, 7)
    case "year":
      return span.at.toISOString().slice(0, 4)
    case "range":
      return startOfDay(span.from) === startOfDay(span.to) ? isoDay(span.from) : `${isoDay(span.from)}/${isoDay(span.to)}`
  }
}

/** One end of a span in words, as precise as it is: a year's first or last instant is the year, a month's the month. */
const endLabel = (at: Date, side: "start" | "end") => {
  const t = at.getTime()
  const y = at.getUTCFullYear()
  const m = at.getUTCMonth()
  if (side === "start" ? t === Date.UTC(y, 0, 1) : t === Date.UTC(y + 1, 0, 1) - 1) return String(y)
  if (side === "start" ? t === Date.UTC(y, m, 1) : t === Date.UTC(y, m + 1, 1) - 1) return `${MONTHS[m]} ${y}`
  return day(at)
}

/**
 * The span of several memories' events in words, each end as precise as the
 * memory it comes from: "2020 – 20 October 2023", "May – October 2023"; one
 * label when both ends read the same.
 */
export const spanLabel = (start: Date, end: Date): string => {
  const from = endLabel(start, "start")
  const to = endLabel(end, "end")
  if (from === to) return from
  const sameYear = / (\d{4})$/.exec(from)?.[1]
  return sameYear !== undefined && to.endsWith(` ${sameYear}`) ? `${from.slice(0, -5)} – ${to}` : `${from} – ${to}`
}
