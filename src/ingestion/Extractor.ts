/**
 * Extraction: written content -> durable memories. The local engine is the
 * offline default; an LLM-backed extractor can replace it behind this Tag.
 */
import { Context, Data, Effect, Layer } from "effect"
import { type Entity, entityKey, extractEntities, opaqueIds } from "./Entities.ts"
import { informativeAnswer, isAssistantSpeaker, isInformative } from "./Informative.ts"
import { resolveRelativeDates } from "./RelativeDates.ts"
import { escapeRegExp, namesWholeWord } from "./Patterns.ts"
import { sentences } from "./Sentences.ts"
import { resolveFirstPerson, speakerName, splitSpeaker } from "./Speaker.ts"

export class ExtractionError extends Data.TaggedError("ExtractionError")<{ readonly message: string; readonly cause?: unknown }> {}
export type { Entity as ExtractedEntity, EntityKind } from "./Entities.ts"

export interface ExtractionInput {
  readonly content: string
  readonly eventTime: Date
  readonly speaker?: string | undefined
  readonly fromAgent?: boolean | undefined
  /** The write's scope ids (user, agent, session): never entities, even when the text names them. */
  readonly scopeIds?: ReadonlyArray<string> | undefined
  /** The space's guidance (extraction settings): topics to keep for the local engine, instructions for a model. */
  readonly guidance?: string | undefined
  /** The space's own extraction instructions (mode `custom`), in place of a model's built-in ones. */
  readonly customPrompt?: string | undefined
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
  /** A language model extracts: guidance and a custom prompt become part of its prompt. */
  readonly prompted: boolean
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

const FIRST_PERSON = /\b(I|I'm|I've|I'd|I'll|me|my|mine|myself)\b/


/**
 * Guidance read by the local engine as a list of topics: separated by commas,
 * semicolons or new lines, each matched case-insensitively as a whole word or
 * phrase (any run of spaces matching any run of whitespace); a topic ending in
 * `*` matches any word starting with it (`allerg*`: allergy, allergic).
 */
export const guidanceTopics = (guidance: string): ReadonlyArray<RegExp> =>
  guidance.split(/[,;\n]/).flatMap((raw) => {
    const open = raw.trim().endsWith("*")
    const words = raw.trim().replace(/\*$/, "").trim().split(/\s+/).filter((w) => w !== "")
    if (words.length === 0) return []
    const phrase = words.map(escapeRegExp).join("\\s+")
    return [new RegExp(`(?<![\\p{L}\\p{N}])${phrase}${open ? "" : "(?![\\p{L}\\p{N}])"}`, "iu")]
  })

/** Whether a memory's text names one of the topics (no topics: everything is kept). */
export const keptByGuidance = (topics: ReadonlyArray<RegExp>) => (memory: ExtractedMemory) =>
  topics.length === 0 || topics.some((topic) => topic.test(memory.text))

/**
 * Who a write's entities are seen from: the speaker its content names, an
 * entity of its own; never a scope id or a speaker given beside the content
 * that is an identifier or a role ("user_8812", "user"), though one that is a
 * name is an entity wherever the text names it (`opaqueIds`); and never an
 * assistant's label ("Assistant"), which names no one in the user's world.
 */
const entityScope = (input: ExtractionInput, prefixed: string | null) => {
  const assistant = prefixed !== null && isAssistantSpeaker(prefixed)
  return {
    speaker: assistant ? null : prefixed,
    exclude: [...opaqueIds([...(input.scopeIds ?? []), ...(prefixed === null && input.speaker ? [input.speaker] : [])]), ...(assistant ? [prefixed] : [])]
  }
}

/**
 * Mode `verbatim`: the content as exactly one memory, word for word (no
 * splitting, no first-person rewriting, no informativeness filter). Its
 * speaker, entities and the first relative date it mentions are still found.
 * Content that is only whitespace gives nothing.
 */
export const extractVerbatim = (input: ExtractionInput): Array<ExtractedMemory> => {
  if (input.content.trim() === "") return []
  const { speaker: prefixed, body } = splitSpeaker(input.content)
  const speaker = prefixed ?? input.speaker ?? null
  const dated = resolveRelativeDates(body, input.eventTime)
  const scope = entityScope(input, prefixed)
  return [{
    text: input.content,
    sourceText: input.content,
    type: input.fromAgent === true && FIRST_PERSON.test(body) ? "experience" : "fact",
    entities: extractEntities(input.content, scope.speaker, scope.exclude),
    occurredStart: dated.start,
    occurredEnd: dated.end,
    speaker
  }]
}

/**
 * An assistant's turn ("Assistant: ...", as the proxy records it) keeps only
 * its informative sentences (see `informativeAnswer`) and is stored in the
 * assistant's own words behind its label, never rewritten in the third person:
 * "I have ..." would become "Assistant have ...", and conjugating every verb
 * for a new subject is guesswork. The label already says whose words they are.
 * With guidance, only the memories naming one of its topics are kept.
 */
export const extractLocal = (input: ExtractionInput): Array<ExtractedMemory> => {
  const { speaker: prefixed, body: written } = splitSpeaker(input.content)
  const assistant = prefixed !== null && isAssistantSpeaker(prefixed)
  const body = assistant ? informativeAnswer(written) : written
  const speaker = prefixed ?? input.speaker ?? null
  const named = prefixed ?? (input.speaker === undefined ? null : speakerName(input.speaker))
  const firstPerson = FIRST_PERSON.test(body)
  const pieces = chunks(body).filter(isInformative).map((piece) => {
    const dated = resolveRelativeDates(piece, input.eventTime)
    let text = named && !assistant ? resolveFirstPerson(dated.text, named) : dated.text
    if (prefixed && (assistant || !text.includes(prefixed))) text = `${prefixed}: ${text}`
    return { piece, dated, text }
  })
  const scope = entityScope(input, prefixed)
  const entities = entitiesOfPieces(pieces.map((p) => p.text), scope.speaker, scope.exclude)
  const memories = pieces.map(({ dated, piece, text }, i): ExtractedMemory => ({
    text,
    sourceText: prefixed ? `${prefixed}: ${piece}` : piece,
    type: input.fromAgent === true && firstPerson ? "experience" : "fact",
    entities: entities[i]!,
    occurredStart: dated.start,
    occurredEnd: dated.end,
    speaker
  }))
  const topics = input.guidance === undefined ? [] : guidanceTopics(input.guidance)
  return memories.filter(keptByGuidance(topics))
}


/**
 * The entities of each piece of one text. Long content is parsed once, its
 * pieces together (compromise's tagging is most of extraction's cost, and
 * each parse of a piece pays its own set-up); a piece gets the speaker and
 * the entities its own words name.
 */
const entitiesOfPieces = (texts: ReadonlyArray<string>, speaker: string | null, exclude: ReadonlyArray<string>): Array<Array<Entity>> => {
  if (texts.length <= 1) return texts.map((text) => extractEntities(text, speaker, exclude))
  const all = extractEntities(texts.join(" "), speaker, exclude)
  const spoken = speaker === null ? null : entityKey(speaker)
  return texts.map((text) => all.filter((entity) => entityKey(entity.name) === spoken || namesWholeWord(text, entity.name)))
}

/** The local engine's `extract`: a queued group given to it exactly (not wrapped) is extracted on the worker thread (WritePreparation). */
export const localExtract = (input: ExtractionInput): Effect.Effect<ReadonlyArray<ExtractedMemory>, ExtractionError> =>
  Effect.try({
    try: () => extractLocal(input),
    catch: (cause) => new ExtractionError({ message: `extraction failed: ${String(cause)}`, cause })
  }).pipe(Effect.withSpan("Extractor.local"))

export const layerLocal = Layer.succeed(Extractor, {
  id: "local-nlp@1",
  prompted: false,
  extract: localExtract
})
