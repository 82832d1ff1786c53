/**
 * What a rule looks for. Each built-in detector finds the spans of a text it
 * recognises; the checksummed ones (card numbers, IBANs) confirm a candidate
 * before it counts, so an order number is not a card.
 */
import safeRegex from "safe-regex2"

export const DETECTORS = ["email", "phone", "credit_card", "api_key", "private_key", "iban", "us_ssn", "regex"] as const
export type Detector = typeof DETECTORS[number]

export interface Span {
  readonly start: number
  readonly end: number
}

const spans = (text: string, pattern: RegExp, accept: (match: string) => boolean = () => true): Array<Span> => {
  const found: Array<Span> = []
  for (const match of text.matchAll(pattern)) {
    if (match.index === undefined || match[0].length === 0 || !accept(match[0])) continue
    found.push({ start: match.index, end: match.index + match[0].length })
  }
  return found
}

const digitsOf = (s: string) => s.replace(/\D/g, "")

/** The Luhn checksum every payment card number carries. */
export const luhn = (digits: string) => {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

/** ISO 13616: the IBAN moved four characters, letters as numbers, mod 97 is 1. */
export const ibanValid = (iban: string) => {
  const compact = iban.replace(/\s/g, "").toUpperCase()
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(compact)) return false
  const moved = compact.slice(4) + compact.slice(0, 4)
  let remainder = 0
  for (const ch of moved) {
    const value = /\d/.test(ch) ? ch : String(ch.charCodeAt(0) - 55)
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97
  }
  return remainder === 1
}

/** Bits per character of a string's own character distribution. */
export const entropy = (s: string) => {
  const counts = new Map<string, number>()
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1)
  let bits = 0
  for (const n of counts.values()) bits -= (n / s.length) * Math.log2(n / s.length)
  return bits
}

/** Key formats of well-known providers. */
const PROVIDER_KEYS = new RegExp(
  [
    String.raw`sk-ant-[A-Za-z0-9_-]{20,}`, // Anthropic
    String.raw`sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, // OpenAI
    String.raw`(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`, // Stripe
    String.raw`whsec_[A-Za-z0-9]{20,}`, // Stripe webhook secrets
    String.raw`(?:AKIA|ASIA)[A-Z0-9]{16}`, // AWS access key ids
    String.raw`gh[pousr]_[A-Za-z0-9]{36,}`, // GitHub tokens
    String.raw`github_pat_[A-Za-z0-9_]{40,}`,
    String.raw`glpat-[A-Za-z0-9_-]{20,}`, // GitLab
    String.raw`xox[abprs]-[A-Za-z0-9-]{10,}`, // Slack
    String.raw`AIza[A-Za-z0-9_-]{35}`, // Google API keys
    String.raw`SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`, // SendGrid
    String.raw`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`, // JSON web tokens
    String.raw`engram_(?:live|test)_[A-Za-z0-9]{20,}` // this service's own keys
  ].map((p) => `\\b${p}`).join("|"),
  "g"
)

/** A long token of letters and digits, mixing cases or digits, with the entropy of a random secret. */
const TOKEN = /(?<![A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{32,}={0,2}(?![A-Za-z0-9_\-+/])/g
const highEntropy = (token: string) =>
  /\d/.test(token) && (/[a-z]/.test(token) || /[A-Z]/.test(token)) && entropy(token) >= 4

const BUILT_IN: Record<Exclude<Detector, "regex">, (text: string) => Array<Span>> = {
  email: (text) => spans(text, /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g),
  // International (+ and 8-15 digits) or North American ((555) 123-4567, 555-123-4567, 555.123.4567).
  phone: (text) =>
    spans(
      text,
      /(?<![\w+])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}(?:[\s.-]?\d{2,4}){1,4}|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?!\w)/g,
      (m) => digitsOf(m).length >= 8 && digitsOf(m).length <= 15
    ),
  credit_card: (text) =>
    spans(text, /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g, (m) => {
      const digits = digitsOf(m)
      return digits.length >= 13 && digits.length <= 19 && luhn(digits) && !/^(\d)\1+$/.test(digits)
    }),
  api_key: (text) => {
    const known = spans(text, PROVIDER_KEYS)
    const covered = (s: Span) => known.some((k) => s.start < k.end && k.start < s.end)
    return [...known, ...spans(text, TOKEN, highEntropy).filter((s) => !covered(s))]
  },
  private_key: (text) =>
    spans(
      text,
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g
    ),
  iban: (text) => spans(text, /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g, ibanValid),
  // Area 001-899 except 666, group 01-99, serial 0001-9999.
  us_ssn: (text) => spans(text, /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g)
}

export interface Finder {
  readonly detector: Detector
  readonly find: (text: string) => Array<Span>
}

export const MAX_PATTERN_LENGTH = 500

/**
 * Why a custom pattern is refused (it does not compile, is too long, or can
 * backtrack catastrophically: a repeated group that itself repeats), or
 * undefined when it is fine.
 */
export const patternProblem = (pattern: string): string | undefined => {
  if (pattern.length === 0) return "pattern must not be empty"
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern must be at most ${MAX_PATTERN_LENGTH} characters`
  try {
    new RegExp(pattern, "gu")
  } catch (cause) {
    return `pattern does not compile: ${cause instanceof Error ? cause.message : String(cause)}`
  }
  if (/\\[1-9]|\\k</.test(pattern)) return "pattern must not use backreferences"
  if (!safeRegex(pattern)) return "pattern can backtrack catastrophically (a repeated group that itself repeats); rewrite it"
  if (new RegExp(pattern, "u").test("")) return "pattern matches the empty string"
  return undefined
}

/** The finder of a rule's detector; a regex rule's pattern was checked when the rule was saved. */
export const finder = (detector: Detector, pattern: string | null): Finder => {
  if (detector !== "regex") return { detector, find: BUILT_IN[detector] }
  const compiled = new RegExp(pattern ?? "(?!)", "gu")
  return { detector, find: (text) => spans(text, compiled) }
}
