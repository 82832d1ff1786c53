/**
 * The parsing worker's body: one file at a time from the main thread,
 * parsed with the same parsers, its progress and then the document streamed
 * back (or why it could not be read). The format libraries' synchronous work
 * (a workbook read, a PDF's text layer) then blocks this thread, never the
 * one serving HTTP. It runs as `@effect/platform`'s worker runner: requests
 * and answers are decoded and encoded by the ParseFile schema.
 */
import { WorkerRunner } from "@effect/platform"
import { NodeWorkerRunner } from "@effect/platform-node"
import { Cause, Effect, Layer, Option, Stream } from "effect"
import { parseDocument } from "./Parsers.ts"
import { ParseFile } from "./ParseProtocol.ts"
import { lowerThisThread } from "../../services/ThreadPriority.ts"

// Requests first: this thread takes the cores the main thread leaves (services/ThreadPriority.ts).
lowerThisThread()

const parseFile = (request: ParseFile) =>
  Stream.asyncPush<typeof ParseFile.success.Type, typeof ParseFile.failure.Type>((emit) =>
    parseDocument(request.bytes, request.filename, request.contentType ?? undefined, {
      cachePath: request.cachePath,
      onProgress: (done, total) => void emit.single({ _tag: "ParseProgress", done, total }),
      ...(request.transcriber === null ? {} : { transcriber: request.transcriber })
    }).pipe(
      Effect.matchCause({
        onSuccess: (document) => {
          emit.single({ _tag: "Parsed", document })
          emit.end()
        },
        onFailure: (cause) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) emit.fail({ _tag: "ParseFailed", message: failure.value.message })
          else emit.die(new Error(Cause.pretty(cause)))
        }
      }),
      Effect.forkScoped
    ))

const Runner = WorkerRunner.layerSerialized(ParseFile, { ParseFile: parseFile }).pipe(Layer.provide(NodeWorkerRunner.layer))

Effect.runFork(WorkerRunner.launch(Runner))
