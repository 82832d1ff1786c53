/**
 * Strings kept as UTF-8 bytes in one growing buffer, each known by where it
 * starts and how many bytes it takes. A hundred thousand memories' texts
 * then cost their bytes, not a string object each on the JavaScript heap
 * (twice a text's length for one with a character beyond Latin-1). Room left
 * by strings let go is taken back once it outweighs what is kept.
 */

/** Where one kept string's bytes are: an index into the arena's ranges. */
export type TextHandle = number

/** Let go bytes that make a compaction worth its copy: at least this many, and more than are kept. */
const COMPACT_BYTES = 1 << 20

export class TextArena {
  private bytes: Buffer = Buffer.allocUnsafe(0)
  private used = 0
  private released = 0
  private starts = new Float64Array(0)
  private lengths = new Int32Array(0)
  private freeHandles: Array<TextHandle> = []
  private handles = 0

  /** Bytes held by kept strings. */
  get keptBytes() {
    return this.used - this.released
  }

  /** Bytes the buffer takes, kept or not yet taken back. */
  get capacityBytes() {
    return this.bytes.length
  }

  /** Keeps `text`; answers its handle. */
  add(text: string): TextHandle {
    const length = Buffer.byteLength(text, "utf8")
    if (this.used + length > this.bytes.length) this.grow(length)
    const written = this.bytes.write(text, this.used, "utf8")
    const handle = this.freeHandles.pop() ?? this.newHandle()
    this.starts[handle] = this.used
    this.lengths[handle] = written
    this.used += written
    return handle
  }

  /** The string kept under `handle`. */
  get(handle: TextHandle): string {
    const start = this.starts[handle]!
    return this.bytes.toString("utf8", start, start + this.lengths[handle]!)
  }

  /** Lets the string under `handle` go; its handle may be given again. */
  release(handle: TextHandle) {
    this.released += this.lengths[handle]!
    this.lengths[handle] = 0
    this.freeHandles.push(handle)
    if (this.released >= COMPACT_BYTES && this.released > this.used - this.released) this.compact()
  }

  private newHandle(): TextHandle {
    const handle = this.handles++
    if (handle >= this.starts.length) {
      const size = Math.max(64, this.starts.length * 2)
      const starts = new Float64Array(size)
      starts.set(this.starts)
      const lengths = new Int32Array(size)
      lengths.set(this.lengths)
      this.starts = starts
      this.lengths = lengths
    }
    return handle
  }

  private grow(wanted: number) {
    const next = Buffer.allocUnsafe(Math.max(this.used + wanted, this.bytes.length * 2, 1 << 16))
    this.bytes.copy(next, 0, 0, this.used)
    this.bytes = next
  }

  /** Copies the kept strings together into a buffer of their size (and a quarter to grow into). */
  private compact() {
    const kept = this.used - this.released
    const next = Buffer.allocUnsafe(Math.max(Math.ceil(kept * 1.25), 1 << 16))
    const free = new Set(this.freeHandles)
    let at = 0
    for (let handle = 0; handle < this.handles; handle++) {
      if (free.has(handle)) continue
      const start = this.starts[handle]!
      const length = this.lengths[handle]!
      this.bytes.copy(next, at, start, start + length)
      this.starts[handle] = at
      at += length
    }
    this.bytes = next
    this.used = at
    this.released = 0
  }
}
