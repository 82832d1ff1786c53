/**
 * Which index slots a query may return: never an inactive memory, and of the
 * others those the caller's filter admits, each decided at most once per query
 * and the verdict shared by every stage (BM25, vectors, neighbours).
 */

export class Admission {
  /** 1 for the slots of inactive memories. */
  private inactive = new Uint8Array(0)
  private inactiveCount = 0
  // One query's verdicts, by slot, valid where stamped with the query's generation.
  private verdicts = new Uint8Array(0)
  private stamps = new Uint32Array(0)
  private generation = 0

  setActive(slot: number, active: boolean) {
    if (slot >= this.inactive.length) {
      if (active) return
      const grown = new Uint8Array(Math.max(slot + 1, this.inactive.length * 2, 64))
      grown.set(this.inactive)
      this.inactive = grown
    }
    const flag = active ? 0 : 1
    this.inactiveCount += flag - this.inactive[slot]!
    this.inactive[slot] = flag
  }

  isActive(slot: number) {
    return slot >= this.inactive.length || this.inactive[slot] === 0
  }

  /** Moves every slot's flag to its new number (`renumber[old]`, -1 for a slot that goes). */
  renumber(renumber: Int32Array, slots: number) {
    const inactive = new Uint8Array(Math.max(slots, 64))
    let count = 0
    for (let old = 0; old < Math.min(renumber.length, this.inactive.length); old++) {
      const now = renumber[old]!
      if (now >= 0 && this.inactive[old] === 1) {
        inactive[now] = 1
        count++
      }
    }
    this.inactive = inactive
    this.inactiveCount = count
    this.verdicts = new Uint8Array(0)
    this.stamps = new Uint32Array(0)
    this.generation = 0
  }

  /**
   * One query's test over slots below `slots`, given the caller's filter;
   * undefined when every slot is admitted, so the stages skip the test.
   */
  forQuery(slots: number, filter: ((slot: number) => boolean) | undefined): ((slot: number) => boolean) | undefined {
    const inactive = this.inactive
    const isActive = (slot: number) => slot >= inactive.length || inactive[slot] === 0
    if (filter === undefined) return this.inactiveCount === 0 ? undefined : isActive
    if (this.stamps.length < slots) {
      this.verdicts = new Uint8Array(Math.max(slots, this.verdicts.length * 2))
      this.stamps = new Uint32Array(this.verdicts.length)
      this.generation = 0
    }
    if (this.generation === 0xffffffff) {
      this.stamps.fill(0)
      this.generation = 0
    }
    const generation = ++this.generation
    const { stamps, verdicts } = this
    return (slot) => {
      if (stamps[slot] === generation) return verdicts[slot] === 1
      const ok = isActive(slot) && filter(slot)
      stamps[slot] = generation
      verdicts[slot] = ok ? 1 : 0
      return ok
    }
  }
}
