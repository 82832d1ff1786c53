/**
 * What a rule looks for. Each built-in detector finds the spans of a text it
 * recognises in time linear in the text; the checksummed ones (card numbers,
 * IBANs) confirm a candidate before it counts, so an order number is not a
 * card. A rule's own pattern runs on RE2 (linear time whatever the pattern).
 */
import { RE2JS } from "re2js"
import safeRegex from "safe-regex2"

export const DETECTORS = ["email", "phone", "credit_card", "api_key", "private_key", "iban", "us_ssn", "prompt_injection", "regex"] as const
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
const PROVIDER_FORMATS = [
  String.raw`sk-ant-[A-Za-z0-9_-]{20,}`, // Anthropic
  String.raw`sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}`, // OpenAI
  String.raw`sk-[A-Za-z0-9]{32,}`, // OpenAI (legacy) and others
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
  String.raw`npm_[A-Za-z0-9]{36}`, // npm
  String.raw`hf_[A-Za-z0-9]{30,}`, // Hugging Face
  String.raw`pypi-[A-Za-z0-9_-]{50,}`, // PyPI
  String.raw`dop_v1_[a-f0-9]{64}`, // DigitalOcean
  String.raw`shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, // Shopify
  String.raw`svc_(?:live|test)_[A-Za-z0-9]{44}`, // this service's own API keys
  String.raw`ses_[A-Za-z0-9]{44}` // and session tokens
]
/** A match runs to the end of its token: a key longer than its format says is still redacted whole. */
const PROVIDER_KEYS = new RegExp(`(?:${PROVIDER_FORMATS.map((p) => `\\b${p}`).join("|")})[A-Za-z0-9_-]*`, "g")

/** A token's words: runs split at separators, case changes (camel humps) and between letters and digits. */
const WORD = /[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]|\d+/g
export const meanWordLength = (token: string) => {
  const words = token.match(WORD) ?? []
  return words.length === 0 ? 0 : words.reduce((n, w) => n + w.length, 0) / words.length
}

/**
 * A long token of letters and digits with the entropy of a random secret.
 * Random characters change case or class every other character or so (words
 * under 2.7 characters on average in 99% of random base62 or base64 tokens),
 * while identifiers and paths are made of words (`user_profile_v2_backup`,
 * `ChartWidget2`): those are kept, and so is hex (hashes, UUIDs, ids).
 */
const TOKEN = /(?<![A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{32,}={0,2}(?![A-Za-z0-9_\-+/])/g
const highEntropy = (token: string) =>
  /\d/.test(token) && /[g-zG-Z]/.test(token) && entropy(token) >= 4 && meanWordLength(token) < 3.5

/** Digit groups separated by single spaces or dashes: where card numbers are looked for. */
const CARD_RUN = /(?<!\d)\d+(?:[ -]\d+)*(?!\d)/g
const CARD_LIKE = /\d(?:[ -]?\d){12}/

const isCard = (digits: string) =>
  digits.length >= 13 && digits.length <= 19 && luhn(digits) && !/^(\d)\1+$/.test(digits)

/**
 * The card numbers in a run of digit groups: the longest leading groups that
 * are one (the whole run when it is), again after it, then the longest
 * trailing groups of what is left, so "4111 1111 1111 1111 123" (a CVV after
 * the number) and "ref 12 4111 1111 1111 1111" still find the card. A card
 * has at most 19 digits, so only a few group counts are ever tried.
 */
const cardsIn = (text: string, run: Span): Array<Span> => {
  const groups = Array.from(text.slice(run.start, run.end).matchAll(/\d+/g), (m): Span => ({
    start: run.start + m.index,
    end: run.start + m.index + m[0].length
  }))
  const size = (g: Span) => g.end - g.start
  const cardOf = (from: number, to: number): Span | undefined => {
    const digits = groups.slice(from, to).map((g) => text.slice(g.start, g.end)).join("")
    return isCard(digits) ? { start: groups[from]!.start, end: groups[to - 1]!.end } : undefined
  }
  const leading = (from: number) => {
    let to = from
    for (let digits = 0; to < groups.length && digits + size(groups[to]!) <= 19; to++) digits += size(groups[to]!)
    for (; to > from; to--) {
      const card = cardOf(from, to)
      if (card !== undefined) return { card, to }
    }
    return undefined
  }
  const found: Array<Span> = []
  let from = 0
  for (let next = leading(from); next !== undefined; next = leading(from)) {
    found.push(next.card)
    from = next.to
  }
  let start = groups.length
  for (let digits = 0; start > from && digits + size(groups[start - 1]!) <= 19; start--) digits += size(groups[start - 1]!)
  for (; start < groups.length; start++) {
    const card = cardOf(start, groups.length)
    if (card !== undefined) {
      found.push(card)
      break
    }
  }
  return found
}

/**
 * Instruction-like text: what tries to pass stored text off as a prompt's
 * structure or as orders to the model that will read it. Each pattern is a
 * marker or a phrase that ordinary conversation does not use (none of the
 * 2,760 turns of the dev conversations matches; `npm run eval:injection`
 * counts them), so a match is worth a flag:
 * - chat-template and turn markers (`<|im_start|>`, `[INST]`, `<<SYS>>`,
 *   `<start_of_turn>`);
 * - a `system:` or `developer:` label opening a line, any role label right
 *   after a tag or marker, a capitalised `SYSTEM:` / `SYSTEM OVERRIDE`;
 * - tags that pretend to open or close a prompt's sections (`</memories>`,
 *   `<system>`, `<instructions>`);
 * - the override phrases ("ignore all previous instructions", "you are now
 *   in developer mode", "new policy:", "reveal your system prompt", "do
 *   anything now");
 * - imitations of tool calls (`<tool_call>`, `<function_calls>`, `<invoke`,
 *   `"tool_calls":`, `{"name": "...", "arguments": {`).
 */
const INJECTION_PATTERNS: ReadonlyArray<RegExp> = [
  /<\|(?:im_start|im_end|im_sep|endoftext|eot_id|eom_id|start_header_id|end_header_id|begin_of_text|system|user|assistant|end)\|>/gi,
  /\[\/?INST\]|<<\/?SYS>>|<\/?(?:start_of_turn|end_of_turn)>/gi,
  /(?:^|[\r\n])[ \t]*(?:system|developer)[ \t]*:/gi,
  /[>\]][ \t]*(?:system|assistant|user|developer|human)[ \t]*:/gi,
  /\b(?:SYSTEM|DEVELOPER)(?:[ \t]+(?:OVERRIDE|PROMPT|MESSAGE|NOTE|INSTRUCTIONS?|UPDATE))?[ \t]*:|\bSYSTEM OVERRIDE\b/g,
  /\bsystem[ \t]+override\b/gi,
  /<\/?(?:system|system[-_]prompt|instructions?|memories|memory|developer|prompt)\b[^<>]{0,40}>/gi,
  /\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any)\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+)?(?:previous|prior|above|earlier|preceding|original|system|initial)\s+(?:instructions?|prompts?|rules|directions|guidelines|messages|directives)\b/gi,
  /\byou\s+are\s+now\s+(?:in\s+)?(?:developer|dan|jailbreak|jailbroken|god|admin|unrestricted|debug)\s+mode\b/gi,
  /\b(?:enter|enable|activate)(?:s|d|ing)?\s+(?:developer|dan|jailbreak|god)\s+mode\b/gi,
  /\bnew\s+(?:system\s+)?(?:instructions?|directives?)\s*:/gi,
  /\bnew\s+(?:system\s+)?polic(?:y|ies)\s*:\s*(?:obey|ignore|always|never|you\b|disregard|reveal|do\s+not)/gi,
  /\b(?:reveal|print|show|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|initial\s+instructions|original\s+instructions)\b/gi,
  /\bdo\s+anything\s+now\b/gi,
  /<\/?(?:tool_call|tool_calls|function_call|function_calls|invoke|tool_use|tool_result|function_results)\b/gi,
  /"(?:tool_calls|function_call)"\s*:/g,
  /"name"\s*:\s*"[^"\n]{1,64}"\s*,\s*"(?:arguments|parameters|input)"\s*:\s*\{/g
]

const injectionSpans = (text: string): Array<Span> => INJECTION_PATTERNS.flatMap((pattern) => spans(text, pattern))

const BUILT_IN: Record<Exclude<Detector, "regex">, (text: string) => Array<Span>> = {
  // Starts only where a run of address characters starts: `\b` would retry at every dot of a long run (quadratic).
  email: (text) => spans(text, /(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b/g),
  // International (+ and 8-15 digits) or North American ((555) 123-4567, 555-123-4567, 555.123.4567).
  phone: (text) =>
    spans(
      text,
      /(?<![\w+])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}(?:[\s.-]?\d{2,4}){1,4}|\(\d{3}\)\s?\d{3}[\s.-]\d{4}|\d{3}[.-]\d{3}[.-]\d{4})(?!\w)/g,
      (m) => digitsOf(m).length >= 8 && digitsOf(m).length <= 15
    ),
  credit_card: (text) => {
    const found: Array<Span> = []
    // Most texts hold no 13 digits in a row (single separators allowed): nothing to look at.
    if (!CARD_LIKE.test(text)) return found
    // A run shorter than 13 characters holds fewer than 13 digits.
    for (const run of spans(text, CARD_RUN, (m) => m.length >= 13)) found.push(...cardsIn(text, run))
    return found
  },
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
  iban: (text) => spans(text, /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/gi, ibanValid),
  // Area 001-899 except 666, group 01-99, serial 0001-9999.
  us_ssn: (text) => spans(text, /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g),
  prompt_injection: injectionSpans
}

export interface Finder {
  readonly detector: Detector
  readonly find: (text: string) => Array<Span>
}

export const MAX_PATTERN_LENGTH = 500

/** A leading `(?i)`-style group of RE2 flags, which JavaScript's syntax does not have. */
const INLINE_FLAGS = /^\(\?[imsU]+\)/

/** Why a pattern failed to compile, without the pattern or a piece of it (answers never repeat the value sent). */
const reasonOf = (cause: unknown) =>
  (cause instanceof Error ? cause.message : String(cause))
    .replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, "")
    .replace(/^error parsing regexp: /, "")
    .replace(/: `[\s\S]*`$/, "")
    .slice(0, 200)

/**
 * Why a rule's pattern is refused, or undefined when it is fine. A pattern is
 * JavaScript regular-expression syntax (Unicode mode), optionally after a
 * leading `(?i)`, that RE2 also accepts: no lookaround, no backreferences.
 * One that could backtrack catastrophically in a backtracking engine (a
 * repeated group that itself repeats, `(a+)+`) is refused too, though RE2
 * runs every pattern in linear time: the ones that slip past that check
 * (`(a|a)+$`) still cannot stall a write.
 */
export const patternProblem = (pattern: string): string | undefined => {
  if (pattern.length === 0) return "pattern must not be empty"
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern must be at most ${MAX_PATTERN_LENGTH} characters`
  const body = pattern.replace(INLINE_FLAGS, "")
  try {
    new RegExp(body, "u")
  } catch (cause) {
    return `pattern does not compile: ${reasonOf(cause)}`
  }
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(pattern)
  } catch (cause) {
    return `pattern does not compile in RE2 (no lookaround, no backreferences): ${reasonOf(cause)}`
  }
  if (!safeRegex(body)) return "pattern can backtrack catastrophically (a repeated group that itself repeats); rewrite it"
  if (compiled.matcher("").find()) return "pattern matches the empty string"
  return undefined
}

/** Compiled patterns by source, so a write does not compile its space's patterns again. */
const compiledPatterns = new Map<string, RE2JS>()
const compilePattern = (pattern: string) => {
  const known = compiledPatterns.get(pattern)
  if (known !== undefined) return known
  const compiled = RE2JS.compile(pattern)
  if (compiledPatterns.size >= 1000) compiledPatterns.delete(compiledPatterns.keys().next().value!)
  compiledPatterns.set(pattern, compiled)
  return compiled
}

const patternSpans = (compiled: RE2JS) => (text: string): Array<Span> => {
  const found: Array<Span> = []
  const matcher = compiled.matcher(text)
  while (matcher.find()) {
    if (matcher.end() > matcher.start()) found.push({ start: matcher.start(), end: matcher.end() })
  }
  return found
}

/** The finder of a rule's detector; a regex rule's pattern was checked when the rule was saved. */
export const finder = (detector: Detector, pattern: string | null): Finder => {
  if (detector !== "regex") return { detector, find: BUILT_IN[detector] }
  if (pattern === null) return { detector, find: () => [] }
  return { detector, find: patternSpans(compilePattern(pattern)) }
}
