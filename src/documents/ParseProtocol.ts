/**
 * What the main thread and the parsing worker say to each other. Messages
 * cross a thread boundary, so both ends decode them with these schemas (the
 * worker pool and its runner do).
 */
import { Schema } from "effect"

const Format = Schema.Literal("pdf", "docx", "doc", "pptx", "ppt", "xlsx", "xls", "csv", "html", "txt", "markdown", "jpg", "png", "mp3", "wav")

const exact = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { exact: true })

const LocationSchema = Schema.Struct({
  page: exact(Schema.Number),
  sheet: exact(Schema.String),
  row: exact(Schema.Number),
  row_end: exact(Schema.Number),
  slide: exact(Schema.Number),
  heading_path: exact(Schema.Array(Schema.String)),
  ocr: exact(Schema.Boolean)
})

export const ParsedDocumentSchema = Schema.Struct({
  format: Format,
  sections: Schema.Array(Schema.Struct({ text: Schema.String, location: LocationSchema, table: Schema.Boolean })),
  units: Schema.Struct({
    kind: Schema.Literal("pages", "slides", "rows", "sections", "seconds"),
    count: Schema.Number
  }),
  ocrPages: Schema.Number,
  textLength: Schema.Number
})

/** Progress of a parse: `done` of `total` units (pages, slides, rows). */
export const ParseProgress = Schema.TaggedStruct("ParseProgress", { done: Schema.Number, total: Schema.Number })
/** The parsed document: the last answer to a ParseFile. */
export const Parsed = Schema.TaggedStruct("Parsed", { document: ParsedDocumentSchema })
/** The file could not be read: the job fails with this message. */
export const ParseFailed = Schema.TaggedStruct("ParseFailed", { message: Schema.String })

/**
 * One file to parse. The worker answers with a stream: its progress as it
 * goes, then the document; or the failure. A bug in a parser is a defect
 * (logged, and the job fails with a generic message).
 */
export class ParseFile extends Schema.TaggedRequest<ParseFile>()("ParseFile", {
  failure: ParseFailed,
  success: Schema.Union(ParseProgress, Parsed),
  payload: {
    bytes: Schema.Uint8ArrayFromSelf,
    filename: Schema.String,
    contentType: Schema.NullOr(Schema.String),
    cachePath: Schema.String,
    transcriber: Schema.NullOr(Schema.Struct({ pocketsphinx: Schema.String, ffmpeg: Schema.String }))
  }
}) {}
