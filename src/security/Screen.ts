/**
 * Applying a space's rules to a text: a `block` rule that matches refuses
 * the whole item; otherwise every match of a `redact` rule is replaced by
 * `[REDACTED:<detector>]`; a `flag` rule that matches leaves the text as it
 * is and names its detector among the flags. Pure, so every write path
 * screens the same way.
 */
import type { Rule } from "../domain/Rules.ts"
import { type Detector, finder, type Span } from "./Detectors.ts"

export interface Screening {
  readonly text: string
  /** The detectors whose matches were redacted, in rule order. */
  readonly redacted: ReadonlyArray<Detector>
  /** The first block rule that matched, if any (the text is then not to be stored at all). */
  readonly blockedBy: Rule | undefined
  /** The detectors of the flag rules that matched, in rule order. */
  readonly flagged: ReadonlyArray<Detector>
}

export interface CompiledRule {
  readonly rule: Rule
  readonly find: (text: string) => ReadonlyArray<Span>
}

export const compile = (rules: ReadonlyArray<Rule>): ReadonlyArray<CompiledRule> =>
  rules.filter((rule) => rule.enabled).map((rule) => ({ rule, find: finder(rule.detector, rule.pattern).find }))

export const screenText = (rules: ReadonlyArray<CompiledRule>, text: string): Screening => {
  if (rules.length === 0 || text.length === 0) return { text, redacted: [], blockedBy: undefined, flagged: [] }
  for (const { find, rule } of rules) {
    if (rule.action === "block" && find(text).length > 0) return { text, redacted: [], blockedBy: rule, flagged: [] }
  }
  const flagged: Array<Detector> = []
  for (const { find, rule } of rules) {
    if (rule.action === "flag" && !flagged.includes(rule.detector) && find(text).length > 0) flagged.push(rule.detector)
  }
  const hits: Array<Span & { readonly detector: Detector }> = []
  for (const { find, rule } of rules) {
    if (rule.action !== "redact") continue
    for (const span of find(text)) hits.push({ ...span, detector: rule.detector })
  }
  if (hits.length === 0) return { text, redacted: [], blockedBy: undefined, flagged }
  // Earliest first, the longer of two starting together; a match inside one already taken is dropped.
  hits.sort((a, b) => a.start - b.start || b.end - a.end)
  let out = ""
  let at = 0
  const redacted: Array<Detector> = []
  for (const hit of hits) {
    if (hit.start < at) continue
    out += `${text.slice(at, hit.start)}[REDACTED:${hit.detector}]`
    at = hit.end
    if (!redacted.includes(hit.detector)) redacted.push(hit.detector)
  }
  return { text: out + text.slice(at), redacted, blockedBy: undefined, flagged }
}

/** What screening a write's texts found, gathered across them. */
export interface Found {
  readonly redacted: Set<Detector>
  readonly flagged: Set<Detector>
  blockedBy: Rule | undefined
}

/** Screens every string inside a JSON value (metadata), keys kept. */
const screenJson = (
  rules: ReadonlyArray<CompiledRule>,
  value: unknown,
  found: Found
): unknown => {
  if (typeof value === "string") {
    const screened = screenText(rules, value)
    for (const d of screened.redacted) found.redacted.add(d)
    for (const d of screened.flagged) found.flagged.add(d)
    if (screened.blockedBy !== undefined && found.blockedBy === undefined) found.blockedBy = screened.blockedBy
    return screened.text
  }
  if (Array.isArray(value)) return value.map((v) => screenJson(rules, v, found))
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, screenJson(rules, v, found)]))
  }
  return value
}

/** Screens every string of a metadata record, at any depth. */
export const screenRecord = (
  rules: ReadonlyArray<CompiledRule>,
  record: { readonly [key: string]: unknown },
  found: Found
): { readonly [key: string]: unknown } =>
  Object.fromEntries(Object.entries(record).map(([k, v]) => [k, screenJson(rules, v, found)]))

/** The flags a memory's metadata carries (`security_flags`, set by `flag` rules). */
export const flagsOf = (metadata: unknown): ReadonlyArray<string> => {
  if (metadata === null || typeof metadata !== "object" || !("security_flags" in metadata)) return []
  const flags = metadata.security_flags
  return Array.isArray(flags) ? flags.filter((f): f is string => typeof f === "string") : []
}

/** Metadata marked with the detectors of the flag rules that matched (kept as it is when none did). */
export const withFlags = (
  metadata: { readonly [key: string]: unknown },
  flagged: Iterable<string>
): { readonly [key: string]: unknown } => {
  const flags = [...flagged]
  if (flags.length === 0) return metadata
  return { ...metadata, security_flags: [...new Set([...flagsOf(metadata), ...flags])] }
}
