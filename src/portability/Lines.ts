/**
 * Reading an export file back: its lines, numbered from 1, from the parts
 * its job keeps in the store (one part in memory at a time, plus the line
 * being completed), and each line decoded with the schema of its kind. A
 * line that does not decode is named by its number and field, never by its
 * content.
 */
import { Data, Effect, Either, Option, ParseResult, Schema } from "effect"
import { type Line, LINE_SCHEMAS, type LineKind, MAX_LINE_BYTES } from "../domain/ExportFormat.ts"
import type { ServiceUnavailable } from "../domain/Errors.ts"
import { yieldToIo } from "../../services/EventLoop.ts"

/** The file cannot be imported as it is: the job fails with this message (nothing is stored). */
export class ImportRejected extends Data.TaggedError("ImportRejected")<{ readonly message: string }> {}

export interface FileLine {
  readonly number: number
  readonly text: string
}

/**
 * Calls `each` with every line of the file, in order; blank lines are
 * skipped (they still count in the numbering), a trailing CR is dropped.
 */
export const forEachLine = <E, R>(
  readPart: (part: number) => Effect.Effect<Option.Option<Uint8Array>, ServiceUnavailable>,
  each: (line: FileLine) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | ImportRejected | ServiceUnavailable, R> =>
  Effect.gen(function*() {
    const decoder = new TextDecoder("utf-8", { fatal: true })
    let pending = ""
    let number = 0
    const emit = (text: string) =>
      Effect.suspend(() => {
        number++
        const line = text.endsWith("\r") ? text.slice(0, -1) : text
        return line.trim() === "" ? Effect.void : each({ number, text: line })
      })
    for (let part = 0; ; part++) {
      const data = yield* readPart(part)
      const text = yield* Effect.try({
        try: () => (Option.isNone(data) ? decoder.decode() : decoder.decode(data.value, { stream: true })),
        catch: () => new ImportRejected({ message: `line ${number + 1}: not valid UTF-8` })
      })
      const pieces = (pending + text).split("\n")
      pending = pieces.pop() ?? ""
      for (const piece of pieces) yield* emit(piece)
      if (pending.length > MAX_LINE_BYTES) {
        return yield* new ImportRejected({ message: `line ${number + 1}: longer than ${MAX_LINE_BYTES / (1024 * 1024)} MiB` })
      }
      if (Option.isNone(data)) break
      yield* yieldToIo
    }
    if (pending !== "") yield* emit(pending)
  })

const where = (path: ReadonlyArray<PropertyKey>) => (path.length === 0 ? "the line" : `field ${path.map(String).join(".")}`)

/** Why a value does not decode, by field, without echoing the value. */
const describe = (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "is not valid"
  const what = issue._tag === "Missing" ? "is missing" : issue._tag === "Unexpected" ? "is not part of this format" : "is not valid"
  return `${where(issue.path)} ${what}`
}

const decoders: { readonly [K in LineKind]: (input: unknown) => Either.Either<Line, ParseResult.ParseError> } = {
  header: Schema.decodeUnknownEither(LINE_SCHEMAS.header),
  memory: Schema.decodeUnknownEither(LINE_SCHEMAS.memory),
  document: Schema.decodeUnknownEither(LINE_SCHEMAS.document),
  memory_model: Schema.decodeUnknownEither(LINE_SCHEMAS.memory_model),
  user_profile: Schema.decodeUnknownEither(LINE_SCHEMAS.user_profile),
  settings: Schema.decodeUnknownEither(LINE_SCHEMAS.settings),
  end: Schema.decodeUnknownEither(LINE_SCHEMAS.end)
}

const isKind = (kind: unknown): kind is LineKind => typeof kind === "string" && Object.hasOwn(LINE_SCHEMAS, kind)

/** One line of an export file, or why it is not one (naming the line). */
export const decodeLine = (line: FileLine): Either.Either<Line, string> => {
  let json: unknown
  try {
    json = JSON.parse(line.text)
  } catch {
    return Either.left(`line ${line.number}: not valid JSON`)
  }
  const kind = typeof json === "object" && json !== null && !Array.isArray(json) ? Object.getOwnPropertyDescriptor(json, "kind")?.value : undefined
  if (!isKind(kind)) return Either.left(`line ${line.number}: not a line of an Engram export (unknown or missing kind)`)
  return Either.mapLeft(decoders[kind](json), (error) => `line ${line.number}: ${kind} ${describe(error)}`)
}
