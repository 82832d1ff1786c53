/**
 * What the main thread and the parsing worker say to each other. Messages
 * cross a thread boundary, so both ends decode them with these schemas.
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

export const ParseRequest = Schema.Struct({
  id: Schema.Number,
  bytes: Schema.Uint8ArrayFromSelf,
  filename: Schema.String,
  contentType: Schema.NullOr(Schema.String),
  cachePath: Schema.String,
  transcriber: Schema.NullOr(Schema.Struct({ pocketsphinx: Schema.String, ffmpeg: Schema.String }))
})
export type ParseRequest = typeof ParseRequest.Type

export const WorkerMessage = Schema.Union(
  Schema.Struct({ id: Schema.Number, type: Schema.Literal("progress"), done: Schema.Number, total: Schema.Number }),
  Schema.Struct({ id: Schema.Number, type: Schema.Literal("done"), document: ParsedDocumentSchema }),
  /** The file could not be read: the job fails with this message. */
  Schema.Struct({ id: Schema.Number, type: Schema.Literal("failed"), message: Schema.String }),
  /** A bug in a parser: logged, and the job fails with a generic message. */
  Schema.Struct({ id: Schema.Number, type: Schema.Literal("defect"), message: Schema.String })
)
export type WorkerMessage = typeof WorkerMessage.Type
