/**
 * Extraction by a catalog model (EXTRACTION_MODEL): one call per write asks
 * for the memories as a JSON object. An answer that does not decode, or a
 * failed call, is an ExtractionError: never a fallback to the local engine.
 */
import { Effect, Either, Layer, Schema } from "effect"
import type { ModelSpec } from "../../services/llm/Catalog.ts"
import type { ChatRequest } from "../../services/llm/Provider.ts"
import { LanguageModels } from "../models/LanguageModels.ts"
import { type EntityKind, entityKey, opaqueIds } from "./Entities.ts"
import { type ExtractedMemory, ExtractionError, type ExtractionInput, Extractor, type ExtractorShape } from "./Extractor.ts"
import { informativeAnswer, isAssistantSpeaker } from "./Informative.ts"
import { splitSpeaker } from "./Speaker.ts"

/** The model's kinds onto the local engine's; a kind it invents is a `thing`. */
const KINDS: Record<string, EntityKind> = {
  person: "person",
  people: "person",
  place: "place",
  location: "place",
  city: "place",
  country: "place",
  organization: "organization",
  organisation: "organization",
  org: "organization",
  company: "organization",
  thing: "thing"
}

const Kind = Schema.transform(Schema.String, Schema.Literal("person", "place", "organization", "thing"), {
  strict: true,
  decode: (kind) => KINDS[kind.trim().toLowerCase()] ?? "thing",
  encode: (kind) => kind
})

const Text = Schema.Trim.pipe(Schema.minLength(1))
const When = Schema.optionalWith(Schema.NullOr(Schema.Date), { default: () => null })

export const ExtractionAnswer = Schema.Struct({
  memories: Schema.Array(Schema.Struct({
    text: Text,
    type: Schema.Literal("fact", "experience"),
    entities: Schema.optionalWith(Schema.Array(Schema.Struct({ name: Text, kind: Kind })), { default: () => [] }),
    occurred_start: When,
    occurred_end: When
  }))
})
export type ExtractionAnswer = typeof ExtractionAnswer.Type

const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(ExtractionAnswer), { errors: "first" })

/** The answer's JSON, inside a ```json fence when the model added one. */
export const decodeAnswer = (text: string): Either.Either<ExtractionAnswer, string> => {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text)
  return Either.mapLeft(decodeJson((fenced ? fenced[1]! : text).trim()), (error) => error.message.slice(0, 300))
}

const SCHEMA = `{"memories":[{"text":string,"type":"fact"|"experience",` +
  `"entities":[{"name":string,"kind":"person"|"place"|"organization"|"thing"}],` +
  `"occurred_start":ISO 8601 string|null,"occurred_end":ISO 8601 string|null}]}`

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

const ANSWER_FORMAT = `Answer with one JSON object and nothing else, of this shape: ${SCHEMA}`

/** The built-in instructions; a space's custom prompt (mode `custom`) takes their place. */
const INSTRUCTIONS = [
  "You extract durable memories from one piece of content written to a long-term memory store.",
  ANSWER_FORMAT,
  "Rules:",
  "- Each text is a self-contained fact in the third person: name the speaker instead of I/me/my, resolve pronouns, and write relative dates (\"yesterday\", \"last May\") as absolute dates, so it reads correctly on its own later.",
  "- Keep every informative detail (names, numbers, dates, preferences, plans); put unrelated facts in separate memories.",
  `- type is "experience" for what the writing agent itself did or went through, "fact" for everything else.`,
  "- entities: the people, places, organizations and other named things the memory mentions.",
  "- occurred_start and occurred_end: when what the memory describes happened, resolved against the event time below; null when the content does not say.",
  "- Content with nothing worth remembering (greetings, thanks, small talk) gives {\"memories\":[]}."
]

/**
 * The system prompt: the instructions (the built-in ones, or the space's
 * custom prompt followed by the answer's JSON shape, which the service
 * decodes whatever the prompt says), the space's guidance when it has some,
 * and the write's event time, speaker and author.
 */
export const prompt = (input: ExtractionInput, speaker: string | null) =>
  [
    ...(input.customPrompt === undefined ? INSTRUCTIONS : [input.customPrompt, ANSWER_FORMAT]),
    ...(input.guidance === undefined ? [] : [`Guidance from the owners of this memory space on what to extract and keep:\n${input.guidance}`]),
    `Event time of the content: ${input.eventTime.toISOString()} (${WEEKDAYS[input.eventTime.getUTCDay()]}).`,
    `Speaker: ${speaker ?? "unknown"}.`,
    `Written by: ${input.fromAgent === true ? "the agent itself" : "a user or on a user's behalf"}.`
  ].join("\n")

/** Enough room for the memories of a long document; a cut-off answer fails rather than losing facts. */
const MAX_TOKENS = 4096

export const make = (spec: ModelSpec) =>
  Effect.map(LanguageModels, (models): ExtractorShape => {
    const failed = (message: string, cause?: unknown) => new ExtractionError({ message: `${spec.id}: ${message}`, cause })
    const extract = (input: ExtractionInput) =>
      Effect.gen(function*() {
        const { body, speaker: prefixed } = splitSpeaker(input.content)
        const speaker = prefixed ?? input.speaker ?? null
        const scope = new Set(opaqueIds(input.scopeIds ?? []).map(entityKey))
        // An assistant's non-answers are left out before the model sees them, as the local engine does; nothing left, no call.
        const assistant = prefixed !== null && isAssistantSpeaker(prefixed)
        const said = assistant ? informativeAnswer(body) : body
        if (assistant && said === "") return []
        const content = said === body ? input.content : `${prefixed}: ${said}`
        const request: ChatRequest = {
          system: prompt(input, speaker),
          messages: [{ role: "user", content }],
          memories: [],
          maxTokens: MAX_TOKENS,
          temperature: 0,
          extra: spec.provider === "openai" ? { response_format: { type: "json_object" } } : {}
        }
        const completion = yield* models.complete(spec, request).pipe(Effect.mapError((e) => failed(e.message, e)))
        if (completion.stopReason === "length") return yield* failed(`the answer was cut off at ${MAX_TOKENS} tokens`)
        const answer = yield* Either.mapLeft(decodeAnswer(completion.text), (reason) => failed(`the answer is not the extraction JSON: ${reason}`))
        return answer.memories.map((memory): ExtractedMemory => ({
          text: memory.text,
          sourceText: content,
          type: memory.type,
          entities: [
            ...new Map(
              memory.entities
                .filter((e) => !scope.has(entityKey(e.name)))
                .map((e) => [entityKey(e.name), e] as const)
            ).values()
          ],
          occurredStart: memory.occurred_start,
          occurredEnd: memory.occurred_end,
          speaker
        }))
      }).pipe(Effect.withSpan("Extractor.llm", { attributes: { model: spec.id } }))
    return { id: `llm:${spec.id}`, prompted: true, extract }
  })

export const layer = (spec: ModelSpec) => Layer.effect(Extractor, make(spec))
