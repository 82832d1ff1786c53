/**
 * The `k` best of a stream of (id, value) offers without sorting the stream:
 * highest value first, and on equal values the earlier offer first, exactly
 * the head of a stable descending sort of the whole stream.
 */

export class TopK {
  private readonly ids: Int32Array
  private readonly values: Float64Array
  /** Offer number of each heap entry: among equal values the later offer is the worse. */
  private readonly arrivals: Float64Array
  private size = 0
  private offers = 0

  constructor(readonly k: number) {
    this.ids = new Int32Array(Math.max(k, 0))
    this.values = new Float64Array(Math.max(k, 0))
    this.arrivals = new Float64Array(Math.max(k, 0))
  }

  /** Whether `a` ranks below `b` (heap order: the root is the worst kept entry). */
  private worse(a: number, b: number) {
    const va = this.values[a]!
    const vb = this.values[b]!
    return va < vb || (va === vb && this.arrivals[a]! > this.arrivals[b]!)
  }

  private swap(a: number, b: number) {
    const id = this.ids[a]!
    const value = this.values[a]!
    const arrival = this.arrivals[a]!
    this.ids[a] = this.ids[b]!
    this.values[a] = this.values[b]!
    this.arrivals[a] = this.arrivals[b]!
    this.ids[b] = id
    this.values[b] = value
    this.arrivals[b] = arrival
  }

  private siftDown(from: number) {
    let i = from
    for (;;) {
      const left = 2 * i + 1
      if (left >= this.size) return
      const right = left + 1
      const worst = right < this.size && this.worse(right, left) ? right : left
      if (!this.worse(worst, i)) return
      this.swap(i, worst)
      i = worst
    }
  }

  /** Whether an offer of `value` now would be kept: callers can skip costly checks for the others. */
  wouldKeep(value: number) {
    return this.size < this.k || (this.k > 0 && value > this.values[0]!)
  }

  offer(id: number, value: number) {
    const arrival = this.offers++
    if (this.size < this.k) {
      let i = this.size++
      this.ids[i] = id
      this.values[i] = value
      this.arrivals[i] = arrival
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (!this.worse(i, parent)) break
        this.swap(i, parent)
        i = parent
      }
      return
    }
    // A later offer beats the worst kept one only with a strictly higher value.
    if (this.k === 0 || !(value > this.values[0]!)) return
    this.ids[0] = id
    this.values[0] = value
    this.arrivals[0] = arrival
    this.siftDown(0)
  }

  /** The kept (id, value) pairs, best first. */
  entries(): Array<[id: number, value: number]> {
    return this.sorted().map((i) => [this.ids[i]!, this.values[i]!])
  }

  private sorted(): Array<number> {
    const order = Array.from({ length: this.size }, (_, i) => i)
    return order.sort((a, b) => (this.worse(b, a) ? -1 : this.worse(a, b) ? 1 : 0))
  }
}
