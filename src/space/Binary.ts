/**
 * Byte-level writing and reading for the index snapshot: LEB128 varints
 * (zigzag for signed values), float32 runs and UTF-8 strings. The reader
 * checks every bound: a truncated or damaged snapshot is a `BadBytes`
 * error, never a wrong value read past its end.
 */

export class BadBytes extends Error {}

const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder("utf-8", { fatal: true })

export class ByteWriter {
  private buffer = new Uint8Array(1 << 16)
  private view = new DataView(this.buffer.buffer)
  length = 0

  private room(bytes: number) {
    if (this.length + bytes <= this.buffer.length) return
    const bigger = new Uint8Array(Math.max(this.buffer.length * 2, this.length + bytes))
    bigger.set(this.buffer.subarray(0, this.length))
    this.buffer = bigger
    this.view = new DataView(bigger.buffer)
  }

  byte(value: number) {
    this.room(1)
    this.buffer[this.length++] = value
  }

  /** A non-negative integer up to 2^53. */
  varint(value: number) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a varint: ${value}`)
    this.room(8)
    let rest = value
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest & 0x7f) | 0x80
      rest = Math.floor(rest / 0x80)
    }
    this.buffer[this.length++] = rest
  }

  /** Any safe integer, zigzag-coded so that small negative numbers stay short. */
  signed(value: number) {
    this.varint(value < 0 ? -2 * value - 1 : 2 * value)
  }

  bytes(value: Uint8Array) {
    this.varint(value.length)
    this.room(value.length)
    this.buffer.set(value, this.length)
    this.length += value.length
  }

  /** Bytes as they are, without their length. */
  raw(value: Uint8Array) {
    this.room(value.length)
    this.buffer.set(value, this.length)
    this.length += value.length
  }

  string(value: string) {
    this.bytes(utf8.encode(value))
  }

  float32s(values: Float32Array) {
    this.varint(values.length)
    this.room(values.length * 4)
    for (let i = 0; i < values.length; i++) this.view.setFloat32(this.length + 4 * i, values[i]!, true)
    this.length += values.length * 4
  }

  result(): Uint8Array {
    return this.buffer.subarray(0, this.length)
  }
}

export class ByteReader {
  private at = 0
  private readonly view: DataView

  private readonly latin1: Buffer

  constructor(private readonly buffer: Uint8Array) {
    this.view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
    // The same bytes, not a copy.
    this.latin1 = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  }

  get done() {
    return this.at === this.buffer.length
  }

  private need(bytes: number) {
    if (this.at + bytes > this.buffer.length) throw new BadBytes(`read past the end at byte ${this.at}`)
  }

  byte(): number {
    this.need(1)
    return this.buffer[this.at++]!
  }

  varint(): number {
    let value = 0
    let scale = 1
    for (let i = 0; i < 8; i++) {
      const byte = this.byte()
      value += (byte & 0x7f) * scale
      if ((byte & 0x80) === 0) return value
      scale *= 0x80
    }
    throw new BadBytes(`a varint longer than 8 bytes at byte ${this.at}`)
  }

  signed(): number {
    const value = this.varint()
    return value % 2 === 0 ? value / 2 : -(value + 1) / 2
  }

  /** A count or index that must be below `limit`. */
  below(limit: number): number {
    const value = this.varint()
    if (value >= limit) throw new BadBytes(`${value} is out of range (below ${limit}) at byte ${this.at}`)
    return value
  }

  bytes(): Uint8Array {
    const length = this.varint()
    this.need(length)
    const out = this.buffer.subarray(this.at, this.at + length)
    this.at += length
    return out
  }

  string(): string {
    const from = this.at
    const length = this.varint()
    this.need(length)
    const start = this.at
    const end = start + length
    // ASCII (ids, most words) is its own Latin-1: no decoder, no view of the bytes.
    let ascii = true
    for (let i = start; i < end; i++) {
      if (this.buffer[i]! >= 0x80) {
        ascii = false
        break
      }
    }
    if (ascii) {
      this.at = end
      return this.latin1.toString("latin1", start, end)
    }
    this.at = from
    try {
      return fromUtf8.decode(this.bytes())
    } catch (cause) {
      if (cause instanceof BadBytes) throw cause
      throw new BadBytes(`invalid UTF-8 at byte ${this.at}`)
    }
  }

  float32s(): Float32Array {
    const length = this.varint()
    this.need(length * 4)
    const out = new Float32Array(length)
    for (let i = 0; i < length; i++) out[i] = this.view.getFloat32(this.at + 4 * i, true)
    this.at += length * 4
    return out
  }
}
