/**
 * Relative dates made absolute against the write's event time, preferring the
 * past: "yesterday" -> "on 7 May 2023", "last month" -> "in April 2023"; and
 * the span of the first one, or else of a date written out in full ("in
 * March 2024"), as the time the sentence tells of.
 */
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
const DAY = 86_400_000
const NUMBERS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, few: 3, couple: 2 }

/** Words that put what a sentence tells in the future: "will", "going to", "planning", "training for", "booked". */
const FUTURE = /\b(?:will|won't|shall|going to|gonna|plan(?:s|ning)? to|planning|hope to|hoping to|can't wait|looking forward|upcoming|coming up|training for|signed up for|registered for|booked|scheduled)\b|'ll\b/i
/**
 * The present progressive of a plan ("I'm travelling in September", "Where
 * am I flying in May?"): with a time that is not now, it speaks of what is to
 * come. Words in -ing that are not verbs after "is" ("is amazing") do not count.
 */
const PROGRESSIVE = /(?:\b(?:am|are|is)|['’](?:m|re|s))(?:\s+(?:i|you|we|they|he|she|it|not|still|also|really|actually|just))?\s+([a-z]+ing)\b/gi
const NOT_VERBS = new Set(["amazing", "interesting", "exciting", "boring", "something", "nothing", "anything", "everything", "thing", "king", "ring", "spring", "morning", "evening", "wedding", "building", "during", "missing", "surprising", "outstanding", "inspiring", "relaxing", "charming", "stunning", "fascinating", "encouraging", "worrying", "annoying", "confusing", "refreshing", "challenging", "rewarding", "appealing", "amusing", "disappointing", "frustrating", "satisfying", "touching", "overwhelming", "pleasing", "willing", "loving", "caring", "outgoing", "ongoing"])
/** Words that put it in the past, which a progressive then does not undo ("what was I doing in May?"). */
const PAST = /\b(?:was|were|did|had|ago|last|yesterday)\b/i

/** Whether a sentence (or a question) tells of what is still to come. */
export const speaksOfFuture = (sentence: string) =>
  FUTURE.test(sentence) ||
  (!PAST.test(sentence) && [...sentence.matchAll(PROGRESSIVE)].some((m) => !NOT_VERBS.has(m[1]!.toLowerCase())))

const MONTH_INDEX = new Map<string, number>([
  ...MONTHS.map((name, i): [string, number] => [name.toLowerCase(), i]),
  ...["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].map((name, i): [string, number] => [name, i]),
  ["sept", 8]
])
const MONTH_WORD = "(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?"
const ORDINAL = "(\\d{1,2})(?:st|nd|rd|th)?"
const YEAR = "((?:19|20)\\d{2})"
/** Dates written out in full, each with the span it names, in the order they are tried (the most precise first). */
const ABSOLUTE: ReadonlyArray<{ readonly pattern: RegExp; readonly span: (m: RegExpExecArray) => { start: number; end: number } | null }> = [
  { pattern: /\b((?:19|20)\d{2})-(\d{2})-(\d{2})\b/, span: (m) => daySpan(Number(m[1]), Number(m[2]) - 1, Number(m[3])) },
  { pattern: new RegExp(`\\b${ORDINAL}(?: of)? ${MONTH_WORD},? ${YEAR}\\b`, "i"), span: (m) => daySpan(Number(m[3]), MONTH_INDEX.get(m[2]!.toLowerCase())!, Number(m[1])) },
  { pattern: new RegExp(`\\b${MONTH_WORD} ${ORDINAL},? ${YEAR}\\b`, "i"), span: (m) => daySpan(Number(m[3]), MONTH_INDEX.get(m[1]!.toLowerCase())!, Number(m[2])) },
  { pattern: new RegExp(`\\b${MONTH_WORD},? ${YEAR}\\b`, "i"), span: (m) => monthSpan(Number(m[2]), MONTH_INDEX.get(m[1]!.toLowerCase())!) },
  { pattern: /\b(?:in|during|throughout) ((?:19|20)\d{2})\b/i, span: (m) => ({ start: Date.UTC(Number(m[1]), 0, 1), end: Date.UTC(Number(m[1]) + 1, 0, 1) - 1 }) }
]
const daySpan = (year: number, month: number, date: number) => {
  const start = Date.UTC(year, month, date)
  // 31 February is no date: nothing is read rather than 3 March.
  if (month < 0 || month > 11 || date < 1 || new Date(start).getUTCMonth() !== month) return null
  return { start, end: start + DAY - 1 }
}
const monthSpan = (year: number, month: number) => ({ start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) - 1 })

/** The span of the first date written out in full ("in March 2024", "on 12 May 2023", "2024-05-03", "in 2022"), if any. */
export const absoluteDate = (sentence: string): { start: number; end: number } | null => {
  for (const { pattern, span } of ABSOLUTE) {
    const found = pattern.exec(sentence)
    const named = found === null ? null : span(found)
    if (named !== null) return named
  }
  return null
}

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
      if (how.toLowerCase() === "in" && speaksOfFuture(sentence)) return month(m >= current ? ref.getUTCFullYear() : ref.getUTCFullYear() + 1, m)
      const strictlyBefore = how.toLowerCase() === "last" ? m >= current : m > current
      return month(strictlyBefore ? ref.getUTCFullYear() - 1 : ref.getUTCFullYear(), m)
    })
  text = text.replace(/\bon on\b/g, "on").replace(/\bin in\b/g, "in")
  // A date written out in full needs no rewriting, but it is when the sentence's event happened.
  if (span === null) span = absoluteDate(sentence)
  const resolved = span as { start: number; end: number } | null
  return { text, start: resolved ? new Date(resolved.start) : null, end: resolved ? new Date(resolved.end) : null }
}
