/**
 * Extraction: written content -> durable memories. The local engine is the
 * offline default; an LLM-backed extractor can replace it behind this Tag.
 */
import { Context, Data, Effect, Layer } from "effect"
import { type Entity, extractEntities } from "./Entities.ts"
import { informativeAnswer, isAssistantSpeaker, isInformative } from "./Informative.ts"
import { resolveRelativeDates } from "./RelativeDates.ts"
import { sentences } from "./Sentences.ts"
import { resolveFirstPerson, splitSpeaker } from "./Speaker.ts"

export class ExtractionError extends Data.TaggedError("ExtractionError")<{ readonly message: string; readonly cause?: unknown }> {}
export type { Entity as ExtractedEntity, EntityKind } from "./Entities.ts"

export interface ExtractionInput {
  readonly content: string
  readonly eventTime: Date
  readonly speaker?: string | undefined
  readonly fromAgent?: boolean | undefined
  /** The write's scope ids (user, agent, session): never entities, even when the text names them. */
  readonly scopeIds?: ReadonlyArray<string> | undefined
}

export interface ExtractedMemory {
  readonly text: string
  readonly sourceText: string
  readonly type: "fact" | "experience"
  readonly entities: ReadonlyArray<Entity>
  readonly occurredStart: Date | null
  readonly occurredEnd: Date | null
  readonly speaker: string | null
}

export interface ExtractorShape {
  readonly id: string
  readonly extract: (input: ExtractionInput) => Effect.Effect<ReadonlyArray<ExtractedMemory>, ExtractionError>
}

export class Extractor extends Context.Tag("engram/ingestion/Extractor")<Extractor, ExtractorShape>() {}

/** Chat turns stay whole (results are judged per turn); long content is cut into facts of a few sentences. */
const SHORT = 400
const CHUNK = 320

export { sentences } from "./Sentences.ts"

const chunks = (body: string) => {
  if (body.length <= SHORT) return [body]
  const out: Array<string> = []
  let current = ""
  for (const sentence of sentences(body)) {
    if (current !== "" && current.length + sentence.length + 1 > CHUNK) {
      out.push(current)
      current = ""
    }
    current = current === "" ? sentence : `${current} ${sentence}`
  }
  if (current !== "") out.push(current)
  return out
}

/**
 * An assistant's turn ("Assistant: ...", as the proxy records it) keeps only
 * its informative sentences (see `informativeAnswer`) and is stored in the
 * assistant's own words behind its label, never rewritten in the third person:
 * "I have ..." would become "Assistant have ...", and conjugating every verb
 * for a new subject is guesswork. The label already says whose words they are.
 */
export const extractLocal = (input: ExtractionInput): Array<ExtractedMemory> => {
  const { speaker: prefixed, body: written } = splitSpeaker(input.content)
  const assistant = prefixed !== null && isAssistantSpeaker(prefixed)
  const body = assistant ? informativeAnswer(written) : written
  const speaker = prefixed ?? input.speaker ?? null
  const firstPerson = /\b(I|I'm|I've|I'd|I'll|me|my|mine|myself)\b/.test(body)
  const memories: Array<ExtractedMemory> = []
  for (const piece of chunks(body)) {
    if (!isInformative(piece)) continue
    const dated = resolveRelativeDates(piece, input.eventTime)
    let text = speaker && !assistant ? resolveFirstPerson(dated.text, speaker) : dated.text
    if (prefixed && (assistant || !text.includes(prefixed))) text = `${prefixed}: ${text}`
    memories.push({
      text,
      sourceText: prefixed ? `${prefixed}: ${piece}` : piece,
      type: input.fromAgent === true && firstPerson ? "experience" : "fact",
      entities: extractEntities(text, prefixed, [...(input.scopeIds ?? []), ...(prefixed === null && input.speaker ? [input.speaker] : [])]),
      occurredStart: dated.start,
      occurredEnd: dated.end,
      speaker
    })
  }
  return memories
}

export const layerLocal = Layer.succeed(Extractor, {
  id: "local-nlp@1",
  extract: (input) =>
    Effect.try({
      try: () => extractLocal(input),
      catch: (cause) => new ExtractionError({ message: `extraction failed: ${String(cause)}`, cause })
    }).pipe(Effect.withSpan("Extractor.local"))
})
