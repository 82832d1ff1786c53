/**
 * Relative dates made absolute against the write's event time, preferring the
 * past: "yesterday" -> "on 7 May 2023", "last month" -> "in April 2023".
 */
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
const DAY = 86_400_000
const NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, few: 3, couple: 2 }

/** Words that put what a sentence tells in the future: "will", "going to", "planning", "training for", "booked". */
const FUTURE = /\b(?:will|won't|shall|going to|gonna|plan(?:s|ning)? to|planning|hope to|hoping to|can't wait|looking forward|upcoming|coming up|training for|signed up for|registered for|booked|scheduled)\b|'ll\b/i

export interface Resolved {
  readonly text: string
  readonly start: Date | null
  readonly end: Date | null
}

const startOfDay = (t: number) => {
  const d = new Date(t)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
}
const dayName = (t: number) => {
  const d = new Date(t)
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}`
}
const monthName = (year: number, month: number) => `${MONTHS[month]} ${year}`

export const resolveRelativeDates = (sentence: string, eventTime: Date): Resolved => {
  const now = eventTime.getTime()
  const today = startOfDay(now)
  const ref = new Date(now)
  let span: { start: number; end: number } | null = null
  const keep = (start: number, end: number) => {
    if (span === null) span = { start, end }
  }
  const day = (t: number) => {
    keep(startOfDay(t), startOfDay(t) + DAY - 1)
    return `on ${dayName(t)}`
  }
  const month = (year: number, m: number) => {
    keep(Date.UTC(year, m, 1), Date.UTC(year, m + 1, 1) - 1)
    return `in ${monthName(year, m)}`
  }

  let text = sentence
    .replace(/\b(?:the day before yesterday)\b/gi, () => day(today - 2 * DAY))
    .replace(/\byesterday\b/gi, () => day(today - DAY))
    .replace(/\b(?:today|tonight|this (?:morning|afternoon|evening))\b/gi, () => day(today))
    .replace(/\btomorrow\b/gi, () => day(today + DAY))
    .replace(/\b(a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple|\d+)(?: of)? (day|week|month|year)s? ago\b/gi, (_, n: string, unit: string) => {
      const count = NUMBERS[n.toLowerCase()] ?? Number(n)
      const u = unit.toLowerCase()
      if (u === "day") return day(today - count * DAY)
      if (u === "week") {
        const start = today - count * 7 * DAY
        keep(start - 3 * DAY, start + 3 * DAY)
        return `around ${dayName(start)}`
      }
      if (u === "month") {
        const total = ref.getUTCFullYear() * 12 + ref.getUTCMonth() - count
        return month(Math.floor(total / 12), total % 12)
      }
      const y = ref.getUTCFullYear() - count
      keep(Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1) - 1)
      return `in ${y}`
    })
    .replace(/\blast (week|weekend)\b/gi, (_, unit: string) => {
      if (unit.toLowerCase() === "weekend") {
        // The last whole weekend before today: on a Saturday or a Sunday, the one before this one.
        const weekday = ref.getUTCDay()
        const saturday = today - (weekday === 0 ? 8 : weekday === 6 ? 7 : weekday + 1) * DAY
        keep(saturday, saturday + 2 * DAY - 1)
        return `on the weekend before ${dayName(today)}`
      }
      const start = today - 7 * DAY
      keep(start - 3 * DAY, today)
      return `in the week before ${dayName(today)}`
    })
    .replace(/\b(last|this past) (sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/gi, (_, _l: string, name: string) => {
      const target = WEEKDAYS.indexOf(name.toLowerCase())
      let back = (ref.getUTCDay() - target + 7) % 7
      if (back === 0) back = 7
      return day(today - back * DAY)
    })
    .replace(/\blast month\b/gi, () => {
      const total = ref.getUTCFullYear() * 12 + ref.getUTCMonth() - 1
      return month(Math.floor(total / 12), total % 12)
    })
    .replace(/\bnext month\b/gi, () => {
      const total = ref.getUTCFullYear() * 12 + ref.getUTCMonth() + 1
      return month(Math.floor(total / 12), total % 12)
    })
    .replace(/\bnext week\b/gi, () => {
      keep(today + DAY, today + 14 * DAY)
      return `in the week after ${dayName(today)}`
    })
    .replace(/\blast year\b/gi, () => {
      const y = ref.getUTCFullYear() - 1
      keep(Date.UTC(y, 0, 1), Date.UTC(y + 1, 0, 1) - 1)
      return `in ${y}`
    })
    .replace(/\bthis year\b/gi, () => `in ${ref.getUTCFullYear()}`)
    .replace(new RegExp(`\\b(last|in|this past) (${MONTHS.join("|")})\\b(?!,? \\d)`, "g"), (_, how: string, name: string) => {
      const m = MONTHS.indexOf(name)
      const current = ref.getUTCMonth()
      // "In September", said of what is still to come ("I'm training for the marathon in September"), is the next one.
      if (how.toLowerCase() === "in" && FUTURE.test(sentence)) return month(m >= current ? ref.getUTCFullYear() : ref.getUTCFullYear() + 1, m)
      const strictlyBefore = how.toLowerCase() === "last" ? m >= current : m > current
      return month(strictlyBefore ? ref.getUTCFullYear() - 1 : ref.getUTCFullYear(), m)
    })
  text = text.replace(/\bon on\b/g, "on").replace(/\bin in\b/g, "in")
  const resolved = span as { start: number; end: number } | null
  return { text, start: resolved ? new Date(resolved.start) : null, end: resolved ? new Date(resolved.end) : null }
}
