/**
 * The extraction worker's body: groups of writes from the main thread,
 * extracted with the local engine (compromise and its cues load here, on the
 * first group), each write's memories or failure answered in order. The
 * tagging then takes this thread's core while the main thread stores the
 * group before. It runs as `@effect/platform`'s worker runner: requests and
 * answers are decoded and encoded by the ExtractGroup schema.
 */
import { WorkerRunner } from "@effect/platform"
import { NodeWorkerRunner } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ExtractGroup, type ExtractionItem, type ExtractionOutcome } from "./ExtractionProtocol.ts"
import { extractLocal, type ExtractionInput, extractVerbatim } from "./Extractor.ts"
import { lowerThisThread } from "../../services/ThreadPriority.ts"

// Requests first: this thread takes the cores the main thread leaves (services/ThreadPriority.ts).
lowerThisThread()

const extractOne = (item: ExtractionItem): ExtractionOutcome => {
  const input: ExtractionInput = {
    content: item.content,
    eventTime: item.eventTime,
    speaker: item.speaker ?? undefined,
    fromAgent: item.fromAgent,
    scopeIds: item.scopeIds,
    guidance: item.guidance ?? undefined
  }
  try {
    return { ok: true, memories: item.verbatim ? extractVerbatim(input) : extractLocal(input) }
  } catch (cause) {
    return { ok: false, message: `extraction failed: ${String(cause)}` }
  }
}

// Synchronous, so one group at a time, in the order sent.
const Runner = WorkerRunner.layerSerialized(ExtractGroup, {
  ExtractGroup: (group) => Effect.sync(() => group.items.map(extractOne))
}).pipe(Layer.provide(NodeWorkerRunner.layer))

Effect.runFork(WorkerRunner.launch(Runner))
