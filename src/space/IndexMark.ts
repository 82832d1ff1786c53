/**
 * The store's version of a space's memories that its index reflects (the
 * store raises the version with every statement that changes any). The load
 * sets it; each change of the writer reads the version before and after its
 * transaction. A snapshot of the index may be taken at a version only if the
 * index reflects it: a change made behind the writer's back (another
 * process, a hand-written statement) shows as a version that moved on its
 * own, and the index is then `diverged` (no snapshot is taken of it, and the
 * next wake rebuilds from the store).
 */
export interface IndexMark {
  /** The index was just built from the store (or its snapshot) at `storeVersion`. */
  readonly indexedAt: (storeVersion: number) => void
  /** A change's transaction found the store at `storeVersion` before it changed anything. */
  readonly before: (storeVersion: number) => void
  /** A change's transaction left the store at `storeVersion`. */
  readonly after: (storeVersion: number) => void
  /** The store version the index reflects, or undefined when the store changed behind the writer's back. */
  readonly version: () => number | undefined
}

export const makeIndexMark = (): IndexMark => {
  let at = -1
  let diverged = true
  return {
    indexedAt: (storeVersion) => {
      at = storeVersion
      diverged = false
    },
    before: (storeVersion) => {
      if (storeVersion !== at) diverged = true
    },
    after: (storeVersion) => {
      at = storeVersion
    },
    version: () => (diverged ? undefined : at)
  }
}
