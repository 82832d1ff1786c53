/**
 * Background threads yield the cores to the main thread. A node's main thread
 * answers requests; its extraction and document-parsing threads do queued
 * work that nobody waits on to the millisecond (a space's wake thread is not
 * lowered: the request that woke the space waits on it). On a machine
 * whose cores are all busy, the kernel shares them fairly between threads,
 * so a recall waits behind a worker's tagging. Each worker lowers its own
 * scheduling priority at start (Linux: `nice` is per thread, and a thread
 * learns its id from /proc/thread-self), so the kernel runs the main thread
 * first whenever both are ready and gives the workers every idle moment.
 * Where the platform has no per-thread priority this does nothing.
 */
import { readlinkSync } from "node:fs"
import { setPriority } from "node:os"

/** How much lower than the main thread: a worker still gets about a tenth of a contended core. */
export const WORKER_NICENESS = 10

/** The calling thread's kernel id, where the platform says it (Linux); undefined elsewhere. */
const currentThreadId = (): number | undefined => {
  if (process.platform !== "linux") return undefined
  try {
    const id = Number(readlinkSync("/proc/thread-self").split("/").pop())
    return Number.isInteger(id) && id > 0 ? id : undefined
  } catch {
    return undefined
  }
}

/** Lowers the calling worker thread's priority to WORKER_NICENESS; does nothing where it cannot. */
export const lowerThisThread = (): void => {
  const id = currentThreadId()
  if (id === undefined || id === process.pid) return
  try {
    setPriority(id, WORKER_NICENESS)
  } catch {
    // A platform or sandbox that refuses: the thread runs at the main thread's priority.
  }
}
