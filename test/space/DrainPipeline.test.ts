/**
 * The drain pipelines: while a group is stored, the next queued items are
 * already being prepared. Driven here with an in-memory queue and writer, and
 * the real preparation (the local engine on its worker thread): order is
 * kept and nothing is lost or stored twice when a store fails mid-pipeline,
 * and a worker that dies with a group is replaced and the group extracted
 * again.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber } from "effect"
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ServiceUnavailable } from "../../src/domain/Errors.ts"
import { DEFAULT_EXTRACTION } from "../../src/domain/ExtractionSettings.ts"
import { spaceRef } from "../../src/domain/Ids.ts"
import type { WriteItem } from "../../src/domain/SpaceProtocol.ts"
import { extractLocal, localExtract } from "../../src/ingestion/Extractor.ts"
import { ExtractionThread, type ExtractionThreadShape } from "../../src/ingestion/WorkerExtraction.ts"
import { makeDrain } from "../../src/space/DrainLoop.ts"
import { makePreparation, type PreparedItem } from "../../src/space/WritePreparation.ts"
import type { QueuedItem } from "../../services/store/JobRepo.ts"

const space = spaceRef({ orgId: "org_pipeline" }, "pipeline")

const write = (content: string): WriteItem => ({
  content,
  eventTime: "2026-11-26T10:00:00.000Z",
  documentId: null,
  context: "",
  metadata: {},
  tags: [],
  userId: null,
  agentId: null,
  sessionId: null,
  memberId: null
})

const item = (n: number): QueuedItem => ({
  jobId: `job_${Math.floor(n / 40)}`,
  position: n % 40,
  write: Either.right(write(`Visitor ${n} met Ada Lovelace in Paris and bought ${n} jars of heather honey.`)),
  queuedAt: new Date(0),
  trace: null
})

const key = (i: QueuedItem) => `${i.jobId}/${i.position}`

/** A queue in memory, and a writer that stores (removes) items, failing the store calls listed in `failing`. */
const fakeStore = (count: number, failing: ReadonlySet<number>) => {
  const queue = Array.from({ length: count }, (_, n) => item(n))
  const stored: Array<{ key: string; prepared: PreparedItem }> = []
  const events: Array<string> = []
  let storeCalls = 0
  const jobs = { nextQueued: (_: typeof space, limit: number) => Effect.sync(() => queue.slice(0, limit)) }
  const writer = {
    storeQueued: (items: ReadonlyArray<QueuedItem>, prepared: ReadonlyArray<PreparedItem>) =>
      Effect.gen(function*() {
        const call = ++storeCalls
        events.push(`store ${key(items[0]!)}`)
        yield* Effect.sleep("30 millis")
        if (failing.has(call)) return yield* new ServiceUnavailable({ message: "injected outage" })
        for (const [i, stored1] of items.entries()) {
          const at = queue.findIndex((q) => key(q) === key(stored1))
          expect(at).toBe(0)
          queue.splice(at, 1)
          stored.push({ key: key(stored1), prepared: prepared[i]! })
        }
        events.push(`stored ${key(items[0]!)}`)
      }),
    failQueued: () => Effect.die("no item is refused here")
  }
  return { queue, stored, events, jobs, writer }
}

/** The supervised loop, reduced: steps until the queue is empty, a failed step retried. */
const drainAll = (step: Effect.Effect<{ readonly more: boolean }, unknown>) =>
  Effect.gen(function*() {
    let failures = 0
    for (let i = 0; i < 100; i++) {
      const result = yield* Effect.either(step)
      if (Either.isLeft(result)) failures++
      else if (!result.right.more) return failures
    }
    return yield* Effect.dieMessage("the drain never finished")
  })

const preparation = (thread: ExtractionThreadShape) =>
  makePreparation({
    thread,
    extractor: { id: "local-nlp@1", prompted: false, extract: localExtract },
    settings: Effect.succeed(DEFAULT_EXTRACTION),
    embedder: { id: "test", dimensions: 1, embed: (texts) => Effect.succeed(texts.map(() => new Float32Array([1]))) },
    extracting: Effect.runSync(Effect.makeSemaphore(1)),
    beforeHeavyWrite: Effect.void
  }).prepareGroupWith

const WORKER = new URL("../../src/ingestion/extract-worker.mjs", import.meta.url)

describe("the drain's pipeline", () => {
  it.scopedLive("keeps order and loses nothing when a store fails mid-pipeline; the prefetched group is prepared again", () =>
    Effect.gen(function*() {
      const thread = yield* ExtractionThread.scoped(WORKER)
      const store = fakeStore(170, new Set([2]))
      const prepareCalls: Array<string> = []
      const prepareGroup = (items: ReadonlyArray<QueuedItem>, settings: typeof DEFAULT_EXTRACTION) => {
        prepareCalls.push(key(items[0]!))
        store.events.push(`prepare ${key(items[0]!)}`)
        return preparation(thread)(items, settings)
      }
      const drain = yield* makeDrain({ space, jobs: store.jobs, writer: store.writer, settings: Effect.succeed(DEFAULT_EXTRACTION), prepareGroup })
      const failures = yield* drainAll(drain.step)

      expect(failures).toBe(1)
      // Every item once, in queue order, each with its own extraction.
      expect(store.stored.map((s) => s.key)).toEqual(Array.from({ length: 170 }, (_, n) => key(item(n))))
      for (const [n, s] of store.stored.entries()) {
        const right = Either.getOrThrow(s.prepared)
        expect(right.memories.map((m) => m.text)).toEqual(
          extractLocal({ content: `Visitor ${n} met Ada Lovelace in Paris and bought ${n} jars of heather honey.`, eventTime: new Date(0) }).map((m) => m.text)
        )
      }
      // Pipelined: the second group was being prepared before the first was stored.
      expect(store.events.indexOf("prepare job_1/10")).toBeLessThan(store.events.indexOf("stored job_0/0"))
      // The second store (items 50-99) failed: those items and the group after them were prepared again.
      expect(prepareCalls.filter((k) => k === "job_1/10")).toHaveLength(2)
      expect(prepareCalls.filter((k) => k === "job_2/20")).toHaveLength(2)
    }), 60_000)

  it.live("asks for another step only while a group is prepared ahead: the queue is not read again after its last group", () =>
    Effect.gen(function*() {
      const prepareGroup = (items: ReadonlyArray<QueuedItem>) => Effect.succeed(items.map((): PreparedItem => Either.left("not needed here")))
      const steps = (count: number) =>
        Effect.scoped(Effect.gen(function*() {
          const store = fakeStore(count, new Set())
          let reads = 0
          const jobs = { nextQueued: (s: typeof space, limit: number) => Effect.suspend(() => (reads++, store.jobs.nextQueued(s, limit))) }
          const drain = yield* makeDrain({ space, jobs, writer: store.writer, settings: Effect.succeed(DEFAULT_EXTRACTION), prepareGroup })
          const answers: Array<boolean> = []
          for (let i = 0; i < 10; i++) {
            const { more } = yield* drain.step
            answers.push(more)
            if (!more) break
          }
          return { answers, reads, stored: store.stored.length }
        }))
      // One write (a stream of single writes): stored in one step, one read of the queue.
      expect(yield* steps(1)).toEqual({ answers: [false], reads: 1, stored: 1 })
      expect(yield* steps(50)).toEqual({ answers: [false], reads: 1, stored: 50 })
      // 120 queued: 50 stored while 50 are prepared ahead, then those while the last 20 are, then the 20.
      expect(yield* steps(120)).toEqual({ answers: [true, true, false], reads: 3, stored: 120 })
    }), 60_000)

  it.scopedLive("a worker that dies with a group is replaced, and the group is extracted again", () =>
    Effect.gen(function*() {
      const marker = join(mkdtempSync(join(tmpdir(), "engram-extract-")), "crashed")
      process.env.ENGRAM_TEST_EXTRACT_CRASH_MARKER = marker
      const thread = yield* ExtractionThread.scoped(new URL("../support/crashing-extract-worker.mjs", import.meta.url))
      try {
        const store = fakeStore(60, new Set())
        const drain = yield* makeDrain({
          space,
          jobs: store.jobs,
          writer: store.writer,
          settings: Effect.succeed(DEFAULT_EXTRACTION),
          prepareGroup: preparation(thread)
        })
        const failures = yield* drainAll(drain.step)
        expect(existsSync(marker)).toBe(true)
        expect(failures).toBe(1)
        expect(store.stored.map((s) => s.key)).toEqual(Array.from({ length: 60 }, (_, n) => key(item(n))))
        for (const s of store.stored) expect(Either.getOrThrow(s.prepared).memories.length).toBeGreaterThan(0)
      } finally {
        delete process.env.ENGRAM_TEST_EXTRACT_CRASH_MARKER
      }
    }), 60_000)

  it.live("the next group is sent to the worker while it still extracts the one before, so it never waits for this thread", () =>
    Effect.gen(function*() {
      const sent: Array<string> = []
      // The worker's answer to the first group is held back until released.
      const release = yield* Deferred.make<void>()
      const thread: ExtractionThreadShape = {
        extract: (items) =>
          Effect.suspend(() => {
            sent.push(items[0]!.content)
            return Effect.zipRight(
              sent.length === 1 ? Deferred.await(release) : Effect.void,
              Effect.sync(() => items.map((i) => ({ ok: true as const, memories: extractLocal({ content: i.content, eventTime: i.eventTime }) })))
            )
          }),
        running: () => true
      }
      const prepare = preparation(thread)
      const first = yield* Effect.fork(prepare([item(0)], DEFAULT_EXTRACTION))
      const second = yield* Effect.fork(prepare([item(1)], DEFAULT_EXTRACTION))
      yield* Effect.sleep("100 millis")
      expect(sent).toHaveLength(2)
      yield* Deferred.succeed(release, undefined)
      expect(Either.getOrThrow((yield* Fiber.join(first))[0]!).memories).toHaveLength(1)
      expect(Either.getOrThrow((yield* Fiber.join(second))[0]!).memories).toHaveLength(1)
    }), 60_000)

  it.live("a group still being prepared ahead is interrupted when the scope the drain was made in closes", () =>
    Effect.gen(function*() {
      const store = fakeStore(100, new Set())
      const interrupted = yield* Deferred.make<void>()
      const prepareGroup = (items: ReadonlyArray<QueuedItem>) =>
        items[0]!.position === 0 && items[0]!.jobId === "job_0"
          ? Effect.succeed(items.map((): PreparedItem => Either.left("not needed here")))
          // The group after the first never finishes preparing.
          : Effect.never.pipe(Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined)))
      yield* Effect.scoped(Effect.gen(function*() {
        const drain = yield* makeDrain({ space, jobs: store.jobs, writer: store.writer, settings: Effect.succeed(DEFAULT_EXTRACTION), prepareGroup })
        const first = yield* drain.step
        expect(first.more).toBe(true)
        expect(store.stored).toHaveLength(50)
      }))
      // Closing the scope interrupted the fiber preparing items 50-99, rather than leaving it running.
      yield* Deferred.await(interrupted).pipe(Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => "the group ahead was left running" }))
    }), 60_000)

  it.live("the worker starts on the first group and stops when the scope that holds it closes", () =>
    Effect.gen(function*() {
      const held = yield* Effect.scoped(Effect.gen(function*() {
        const thread = yield* ExtractionThread.scoped(WORKER)
        expect(thread.running()).toBe(false)
        const [outcome] = yield* thread.extract([{ content: "Ada Lovelace moved to Paris in 1840.", eventTime: new Date(0), scopeIds: [], fromAgent: false, speaker: null, guidance: null, verbatim: false }])
        expect(outcome?.ok).toBe(true)
        expect(thread.running()).toBe(true)
        return thread
      }))
      expect(held.running()).toBe(false)
    }), 60_000)
})
