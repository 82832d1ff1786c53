/** MP3 and WAV: converted by ffmpeg and transcribed offline by pocketsphinx. */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { constants } from "node:fs"
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { describe, ParseError, type Parser, prose, u32 } from "./Shared.ts"

const INSTALL_HINT = "apt-get install pocketsphinx pocketsphinx-en-us ffmpeg"

const executable = (path: string) => access(path, constants.X_OK).then(() => true, () => false)

const onPath = async (name: string) => {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "")) {
    if (await executable(join(dir, name))) return join(dir, name)
  }
  return undefined
}

const run = (command: string, args: ReadonlyArray<string>, what: string) =>
  Effect.async<string, ParseError>((resume, signal) => {
    execFile(command, [...args], { signal, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) resume(Effect.succeed(stdout))
      else resume(Effect.fail(new ParseError({ message: `${what} failed: ${describe(stderr.trim().split("\n").slice(-3).join(" ") || error)}` })))
    })
  })

/** Seconds of 16 kHz mono 16-bit audio in a WAV file, from its data chunk. */
const wavSeconds = (wav: Uint8Array) => {
  for (let at = 12; at + 8 <= wav.length; at += 8 + u32(wav, at + 4) + (u32(wav, at + 4) % 2)) {
    if (String.fromCharCode(...wav.subarray(at, at + 4)) === "data") return Math.min(u32(wav, at + 4), wav.length - at - 8) / 32000
  }
  return 0
}

export const parseAudio: Parser = (bytes, options) =>
  Effect.gen(function* () {
    const tools = options.transcriber ??
      { pocketsphinx: (yield* Effect.promise(() => onPath("pocketsphinx_continuous"))) ?? "", ffmpeg: (yield* Effect.promise(() => onPath("ffmpeg"))) ?? "" }
    for (const [name, path] of [["pocketsphinx", tools.pocketsphinx], ["ffmpeg", tools.ffmpeg]] as const) {
      if (!(yield* Effect.promise(() => path === "" ? Promise.resolve(false) : executable(path)))) {
        return yield* new ParseError({
          message: `audio cannot be transcribed on this server: ${name} is not installed${path === "" ? "" : ` (no executable at ${path})`}; install it with \`${INSTALL_HINT}\``
        })
      }
    }
    const dir = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => mkdtemp(join(tmpdir(), "engram-audio-")), catch: (cause) => new ParseError({ message: `no room for audio conversion: ${describe(cause)}` }) }),
      (path) => Effect.promise(() => rm(path, { recursive: true, force: true }))
    )
    const input = join(dir, "input")
    const wav = join(dir, "speech.wav")
    yield* Effect.tryPromise({ try: () => writeFile(input, bytes), catch: (cause) => new ParseError({ message: `no room for audio conversion: ${describe(cause)}` }) })
    yield* run(tools.ffmpeg, ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", input, "-ar", "16000", "-ac", "1", "-sample_fmt", "s16", "-f", "wav", wav], "this audio file could not be decoded: ffmpeg")
    const seconds = wavSeconds(yield* Effect.tryPromise({ try: () => readFile(wav), catch: (cause) => new ParseError({ message: `this audio file could not be decoded: ${describe(cause)}` }) }))
    const transcript = yield* run(tools.pocketsphinx, ["-infile", wav, "-logfn", "/dev/null"], `transcription (is pocketsphinx-en-us installed? ${INSTALL_HINT})`)
    options.onProgress?.(1, 1)
    return {
      sections: prose(transcript.split("\n").map((line) => line.trim()).filter((line) => line !== "").join("\n"), {}),
      units: { kind: "seconds", count: Math.round(seconds * 10) / 10 },
      ocrPages: 0
    }
  })
