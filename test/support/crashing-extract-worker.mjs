// An extraction worker that dies on the first group it is given (the test's marker file does not exist
// yet), then, once restarted, is the real one: the drain must retry the group on a fresh worker. Before
// dying it says it is ready, as the worker pool's runner protocol has a worker do ([0]).
import { existsSync, writeFileSync } from "node:fs"
import { parentPort } from "node:worker_threads"

const marker = process.env.ENGRAM_TEST_EXTRACT_CRASH_MARKER
if (marker !== undefined && !existsSync(marker)) {
  parentPort?.on("message", () => {
    writeFileSync(marker, "crashed")
    process.exit(3)
  })
  parentPort?.postMessage([0])
} else {
  await import("../../src/ingestion/extract-worker.mjs")
}
