/**
 * The space's rules over an imported line, as over any write: every text a
 * memory keeps (its text, source text, context, metadata, the versions in
 * its history, the names of its entities) and a memory model's texts.
 * `redact` rewrites the match as `[REDACTED:<detector>]` (an entity whose
 * name held one is dropped); `block` refuses the line, and the import with it;
 * `flag` marks the memory (`metadata.security_flags`).
 */
import type { Rule } from "../domain/Rules.ts"
import type { MemoryLine, ModelLine } from "../domain/ExportFormat.ts"
import type { Detector } from "../security/Detectors.ts"
import { type CompiledRule, type Found, screenRecord, screenText, withFlags } from "../security/Screen.ts"

export interface Screened<A> {
  readonly line: A
  /** The detectors whose matches were redacted. */
  readonly redacted: ReadonlyArray<Detector>
  /** The first block rule that matched: the line is refused. */
  readonly blockedBy: Rule | undefined
}

/** Applies `rules` to the texts of one line, collecting what they found. */
const screener = (rules: ReadonlyArray<CompiledRule>) => {
  const found: Found = { redacted: new Set(), flagged: new Set(), blockedBy: undefined }
  const text = (value: string) => {
    const result = screenText(rules, value)
    for (const d of result.redacted) found.redacted.add(d)
    for (const d of result.flagged) found.flagged.add(d)
    if (result.blockedBy !== undefined && found.blockedBy === undefined) found.blockedBy = result.blockedBy
    return result.text
  }
  const record = (value: { readonly [key: string]: unknown }) => screenRecord(rules, value, found)
  const done = <A>(line: A): Screened<A> => ({ line, redacted: [...found.redacted], blockedBy: found.blockedBy })
  return { text, record, done, found }
}

export const screenMemory = (rules: ReadonlyArray<CompiledRule>, line: MemoryLine): Screened<MemoryLine> => {
  if (rules.length === 0) return { line, redacted: [], blockedBy: undefined }
  const s = screener(rules)
  const entities = line.entities.filter((entity) => s.text(entity.name) === entity.name)
  const text = s.text(line.text)
  const sourceText = s.text(line.source_text)
  const context = s.text(line.context)
  const metadata = s.record(line.metadata)
  return s.done({
    ...line,
    text,
    source_text: sourceText,
    context,
    // A flag rule's finding in the memory itself marks it, as on every other write path.
    metadata: withFlags(metadata, s.found.flagged),
    entities,
    history: line.history.map((entry) =>
      entry.previous === null ? entry : {
        ...entry,
        previous: {
          ...entry.previous,
          text: s.text(entry.previous.text),
          context: s.text(entry.previous.context),
          metadata: s.record(entry.previous.metadata)
        }
      }
    )
  })
}

export const screenModel = (rules: ReadonlyArray<CompiledRule>, line: ModelLine): Screened<ModelLine> => {
  if (rules.length === 0) return { line, redacted: [], blockedBy: undefined }
  const s = screener(rules)
  return s.done({
    ...line,
    name: s.text(line.name),
    query: s.text(line.query),
    content: line.content === null ? null : s.text(line.content),
    refreshed_query: line.refreshed_query === null ? null : s.text(line.refreshed_query),
    history: line.history.map((entry) => ({ ...entry, previous_content: s.text(entry.previous_content) }))
  })
}
