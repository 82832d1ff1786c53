/** Server-sent events read from a byte stream: one `{event, data}` per blank-line-terminated block. */
import { Stream } from "effect"

export interface SseEvent {
  readonly event: string | undefined
  readonly data: string
}

export const sseEvents = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<SseEvent, E, R> =>
  bytes.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.mapAccum({ event: undefined as string | undefined, data: [] as Array<string> }, (pending, line) => {
      if (line === "") {
        const done = pending.data.length > 0 ? [{ event: pending.event, data: pending.data.join("\n") }] : []
        return [{ event: undefined, data: [] }, done]
      }
      if (line.startsWith(":")) return [pending, []]
      const colon = line.indexOf(":")
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (field === "event") return [{ ...pending, event: value }, []]
      if (field === "data") return [{ ...pending, data: [...pending.data, value] }, []]
      return [pending, []]
    }),
    Stream.flattenIterables
  )
