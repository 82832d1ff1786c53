/**
 * The built-in engine: no LLM. It answers extractively, quoting the recalled
 * memories that share the most content words with the question (in their
 * recall order when none do), and streams the answer word by word. Honest
 * about what it is: it never invents, and says so when it remembers nothing.
 */
import { Effect, Stream } from "effect"
import { type ChatRequest, type Completion, estimateTokens, type Provider, type StreamPart } from "../../services/llm/Provider.ts"
import { terms } from "../retrieval/Text.ts"

export const NOTHING_REMEMBERED = "I have no stored memories about that yet."
/** Marks an answer that only quotes memories; ingestion does not store it again (src/ingestion/Informative.ts). */
export const ANSWER_PREFIX = "From memory:"
const MAX_QUOTED = 3

/**
 * The statements a memory makes: a recorded answer of this engine is split back
 * into the memories it quoted; questions state nothing and are left out.
 */
const statements = (memory: string) =>
  memory.replace(ANSWER_PREFIX, "\n").split(/\n+/).map((line) => line.replace(/^\s*-\s+/, "").trim())
    .filter((line) => line !== "" && !line.endsWith("?") && line !== NOTHING_REMEMBERED && !/^[\p{L} .'’-]{1,40}:$/u.test(line))

const question = (request: ChatRequest) => [...request.messages].reverse().find((m) => m.role === "user")?.content ?? ""

/** The memories worth quoting: most content words shared with the question, recall order breaking ties. */
export const pickMemories = (query: string, memories: ReadonlyArray<string>): ReadonlyArray<string> => {
  const wanted = new Set(terms(query))
  const distinct = [...new Set(memories.flatMap(statements))]
  const scored = distinct.map((text, rank) => ({ text, rank, shared: new Set(terms(text).filter((t) => wanted.has(t))).size }))
  const matching = scored.filter((m) => m.shared > 0).sort((a, b) => b.shared - a.shared || a.rank - b.rank)
  return (matching.length > 0 ? matching : scored).slice(0, MAX_QUOTED).map((m) => m.text.trim())
}

export const answer = (request: ChatRequest): string => {
  const quoted = pickMemories(question(request), request.memories)
  if (quoted.length === 0) return NOTHING_REMEMBERED
  if (quoted.length === 1) return `${ANSWER_PREFIX} ${quoted[0]}`
  return `${ANSWER_PREFIX}\n${quoted.map((m) => `- ${m}`).join("\n")}`
}

/** Word-sized tokens, each keeping its trailing white space, so the deltas join back into the answer. */
export const tokenize = (text: string) => text.match(/\s*\S+\s*/g) ?? []

const run = (request: ChatRequest) => {
  const all = tokenize(answer(request))
  const tokens = request.maxTokens !== undefined && all.length > request.maxTokens ? all.slice(0, request.maxTokens) : all
  return {
    tokens,
    completion: {
      text: tokens.join(""),
      stopReason: tokens.length < all.length ? "length" : "stop",
      usage: {
        input_tokens: estimateTokens([request.system, ...request.messages.map((m) => m.content)].join("\n")),
        output_tokens: tokens.length
      }
    } satisfies Completion
  }
}

export const LocalEngine: Provider = {
  complete: (_spec, request) => Effect.sync(() => run(request).completion),
  stream: (_spec, request) =>
    Effect.sync(() => {
      const { completion, tokens } = run(request)
      return Stream.fromIterable<StreamPart>([
        ...tokens.map((text): StreamPart => ({ _tag: "Delta", text })),
        { _tag: "Done", usage: completion.usage, stopReason: completion.stopReason }
      ]).pipe(Stream.rechunk(1))
    })
}
