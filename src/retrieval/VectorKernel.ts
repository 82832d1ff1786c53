/**
 * The dot products of one query with every stored vector, four lanes at a
 * time (WebAssembly SIMD): the vector scan of a large space is most of a
 * recall's time in plain JavaScript. The module is a few dozen instructions,
 * encoded here byte by byte (no toolchain, nothing fetched); `dots` answers
 * float32 sums, good for choosing candidates, and callers that need a
 * similarity exactly compute it again (`exactDot`). Where SIMD is not
 * available the same loop runs in JavaScript.
 */

import { setFlagsFromString } from "node:v8"

/** LEB128, unsigned. */
const u32 = (value: number): Array<number> => {
  const out: Array<number> = []
  let rest = value >>> 0
  do {
    let byte = rest & 0x7f
    rest >>>= 7
    if (rest !== 0) byte |= 0x80
    out.push(byte)
  } while (rest !== 0)
  return out
}
const utf8 = (text: string) => [...u32(text.length), ...Buffer.from(text, "utf8")]
const section = (id: number, body: ReadonlyArray<number>) => [id, ...u32(body.length), ...body]

const I32 = 0x7f
const V128 = 0x7b
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...u32(depth)],
  brIf: (depth: number) => [0x0d, ...u32(depth)],
  get: (local: number) => [0x20, ...u32(local)],
  set: (local: number) => [0x21, ...u32(local)],
  i32: (value: number) => [0x41, ...u32(value)], // small non-negative constants only (their LEB is the same signed)
  i32Add: [0x6a],
  i32Mul: [0x6c],
  i32Shl: [0x74],
  i32GeU: [0x4f],
  i32GtU: [0x4b],
  tee: (local: number) => [0x22, ...u32(local)],
  f32Load: [0x2a, 2, 0],
  f32Mul: [0x94],
  f32FromI32: [0xb2],
  i16x8FromLowI8: [0xfd, ...u32(0x87)],
  i16x8FromHighI8: [0xfd, ...u32(0x88)],
  i32x4DotI16: [0xfd, ...u32(0xba)],
  i32x4Add: [0xfd, ...u32(0xae)],
  i32x4Lane: (lane: number) => [0xfd, ...u32(0x1b), lane],
  f32Add: [0x92],
  f32Store: [0x38, 2, 0],
  i32Load: [0x28, 2, 0],
  f64Load: [0x2b, 3, 0],
  v128Load: [0xfd, ...u32(0x00), 4, 0],
  /** At a byte offset from the address on the stack (16-byte aligned). */
  v128LoadAt: (offset: number) => [0xfd, ...u32(0x00), 4, ...u32(offset)],
  /** At byte offset 8, alignment not promised (a word's vector follows its 8-byte weight). */
  v128LoadAfterWeight: [0xfd, ...u32(0x00), 0, 8],
  v128Store: [0xfd, ...u32(0x0b), 4, 0],
  shuffle: (lanes: ReadonlyArray<number>) => [0xfd, ...u32(0x0d), ...lanes],
  f64x2Splat: [0xfd, ...u32(0x14)],
  f64x2Add: [0xfd, ...u32(0xf0)],
  f64x2Mul: [0xfd, ...u32(0xf2)],
  f64x2PromoteLow: [0xfd, ...u32(0x5f)],
  f32x4DemoteZero: [0xfd, ...u32(0x5e)],
  v128Zero: [0xfd, ...u32(0x0c), ...new Array<number>(16).fill(0)],
  f32x4Lane: (lane: number) => [0xfd, ...u32(0x1f), lane],
  f32x4Add: [0xfd, ...u32(0xe4)],
  f32x4Mul: [0xfd, ...u32(0xe6)]
}

// dots(query, base, count, dims, out): out[i] = sum over d of base[i * dims + d] * query[d], as float32;
// pointers are byte offsets, `dims` a multiple of four. Sixteen floats a step into four sums of their own
// (one sum would wait for its previous add every time: 48 ms for a million vectors of 100 floats, 4.5x
// the four sums' time), then the last four at a time; the sums' order moves the float32 answers by
// about 1e-7, which callers that need exact values compute again anyway.
const [QUERY, BASE, COUNT, DIMS, OUT, I, D, P, PX, QX, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
const SUMS = [ACC, ACC + 1, ACC + 2, ACC + 3]
const times4 = (local: number) => [...op.get(local), ...op.i32(2), ...op.i32Shl]
const dotsBody = [
  ...op.get(BASE), ...op.set(P),
  ...op.block, ...op.loop,
  ...op.get(I), ...op.get(COUNT), ...op.i32GeU, ...op.brIf(1),
  ...SUMS.flatMap((sum) => [...op.v128Zero, ...op.set(sum)]),
  ...op.i32(0), ...op.set(D),
  // Sixteen at a time, into the four sums.
  ...op.block, ...op.loop,
  ...op.get(D), ...op.i32(16), ...op.i32Add, ...op.get(DIMS), ...op.i32GtU, ...op.brIf(1),
  ...op.get(P), ...times4(D), ...op.i32Add, ...op.set(PX),
  ...op.get(QUERY), ...times4(D), ...op.i32Add, ...op.set(QX),
  ...SUMS.flatMap((sum, k) => [
    ...op.get(sum),
    ...op.get(PX), ...op.v128LoadAt(16 * k),
    ...op.get(QX), ...op.v128LoadAt(16 * k),
    ...op.f32x4Mul, ...op.f32x4Add, ...op.set(sum)
  ]),
  ...op.get(D), ...op.i32(16), ...op.i32Add, ...op.set(D),
  ...op.br(0),
  ...op.end, ...op.end,
  // The rest, four at a time, into the first.
  ...op.block, ...op.loop,
  ...op.get(D), ...op.get(DIMS), ...op.i32GeU, ...op.brIf(1),
  ...op.get(ACC),
  ...op.get(P), ...times4(D), ...op.i32Add, ...op.v128Load,
  ...op.get(QUERY), ...times4(D), ...op.i32Add, ...op.v128Load,
  ...op.f32x4Mul, ...op.f32x4Add, ...op.set(ACC),
  ...op.get(D), ...op.i32(4), ...op.i32Add, ...op.set(D),
  ...op.br(0),
  ...op.end, ...op.end,
  ...op.get(ACC), ...op.get(SUMS[1]!), ...op.f32x4Add, ...op.get(SUMS[2]!), ...op.get(SUMS[3]!), ...op.f32x4Add, ...op.f32x4Add, ...op.set(ACC),
  ...op.get(OUT), ...times4(I), ...op.i32Add,
  ...op.get(ACC), ...op.f32x4Lane(0),
  ...op.get(ACC), ...op.f32x4Lane(1), ...op.f32Add,
  ...op.get(ACC), ...op.f32x4Lane(2), ...op.f32Add,
  ...op.get(ACC), ...op.f32x4Lane(3), ...op.f32Add,
  ...op.f32Store,
  ...op.get(P), ...times4(DIMS), ...op.i32Add, ...op.set(P),
  ...op.get(I), ...op.i32(1), ...op.i32Add, ...op.set(I),
  ...op.br(0),
  ...op.end, ...op.end,
  ...op.end
]
const dotsCode = [...u32(2), ...u32(5), I32, ...u32(4), V128, ...dotsBody]

// derive(tokens, count, entries, entrySize, stride, out): for each of `count` word numbers at `tokens`, in order,
// out[d] = float32(out[d] + weight * vector[d]) over the word's entry (a float64 weight, then `stride` float32s),
// computed in float64 and rounded to float32 at every step: exactly what a Float32Array sum in JavaScript does.
const [TOKENS, N, ENTRIES, ENTRY, STRIDE, VOUT, T, DD, E, W, ACC2, V2] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
const HIGH_TO_LOW = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]
const LOWS_OF_BOTH = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
const stepHalf = (high: boolean) => [
  ...op.get(ACC2), ...(high ? [...op.get(ACC2), ...op.shuffle(HIGH_TO_LOW)] : []), ...op.f64x2PromoteLow,
  ...op.get(V2), ...(high ? [...op.get(V2), ...op.shuffle(HIGH_TO_LOW)] : []), ...op.f64x2PromoteLow,
  ...op.get(W), ...op.f64x2Mul, ...op.f64x2Add, ...op.f32x4DemoteZero
]
const deriveBody = [
  ...op.block, ...op.loop,
  ...op.get(T), ...op.get(N), ...op.i32GeU, ...op.brIf(1),
  // e = entries + tokens[t] * entrySize; W = splat(weight)
  ...op.get(ENTRIES), ...op.get(TOKENS), ...times4(T), ...op.i32Add, ...op.i32Load, ...op.get(ENTRY), ...op.i32Mul, ...op.i32Add,
  ...op.set(E),
  ...op.get(E), ...op.f64Load, ...op.f64x2Splat, ...op.set(W),
  ...op.i32(0), ...op.set(DD),
  ...op.block, ...op.loop,
  ...op.get(DD), ...op.get(STRIDE), ...op.i32GeU, ...op.brIf(1),
  ...op.get(VOUT), ...times4(DD), ...op.i32Add,
  ...op.get(VOUT), ...times4(DD), ...op.i32Add, ...op.v128Load, ...op.set(ACC2),
  ...op.get(E), ...times4(DD), ...op.i32Add, ...op.v128LoadAfterWeight, ...op.set(V2),
  ...stepHalf(false), ...stepHalf(true), ...op.shuffle(LOWS_OF_BOTH),
  ...op.v128Store,
  ...op.get(DD), ...op.i32(4), ...op.i32Add, ...op.set(DD),
  ...op.br(0),
  ...op.end, ...op.end,
  ...op.get(T), ...op.i32(1), ...op.i32Add, ...op.set(T),
  ...op.br(0),
  ...op.end, ...op.end,
  ...op.end
]
const deriveCode = [...u32(2), ...u32(3), I32, ...u32(3), V128, ...deriveBody]

// dots8(query, codes, count, width, scales, out): out[i] = float32(sum over d of codes[i * width + d] * query[d])
// * scales[i], where codes are int8 (`width` bytes a vector, a multiple of 16) and the query int16 (two bytes a
// dimension): a quarter of the float32 vectors' bytes to read, which is what a scan of a million is bound by.
// The int32 sums are exact (at most 127 * 32767 * width, below 2^31 for widths up to 512).
const [Q8, CODES, COUNT8, WIDTH, SCALES, OUT8, I8, B8, PX8, QX8, LOW, HIGH, V8] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
const dots8Body = [
  ...op.get(CODES), ...op.set(PX8),
  ...op.block, ...op.loop,
  ...op.get(I8), ...op.get(COUNT8), ...op.i32GeU, ...op.brIf(1),
  ...op.v128Zero, ...op.set(LOW),
  ...op.v128Zero, ...op.set(HIGH),
  ...op.i32(0), ...op.set(B8),
  ...op.get(Q8), ...op.set(QX8),
  ...op.block, ...op.loop,
  ...op.get(B8), ...op.get(WIDTH), ...op.i32GeU, ...op.brIf(1),
  ...op.get(LOW),
  ...op.get(PX8), ...op.get(B8), ...op.i32Add, ...op.v128Load, ...op.tee(V8), ...op.i16x8FromLowI8,
  ...op.get(QX8), ...op.v128Load,
  ...op.i32x4DotI16, ...op.i32x4Add, ...op.set(LOW),
  ...op.get(HIGH),
  ...op.get(V8), ...op.i16x8FromHighI8,
  ...op.get(QX8), ...op.v128LoadAt(16),
  ...op.i32x4DotI16, ...op.i32x4Add, ...op.set(HIGH),
  ...op.get(B8), ...op.i32(16), ...op.i32Add, ...op.set(B8),
  ...op.get(QX8), ...op.i32(32), ...op.i32Add, ...op.set(QX8),
  ...op.br(0),
  ...op.end, ...op.end,
  ...op.get(LOW), ...op.get(HIGH), ...op.i32x4Add, ...op.set(LOW),
  ...op.get(OUT8), ...times4(I8), ...op.i32Add,
  ...op.get(LOW), ...op.i32x4Lane(0),
  ...op.get(LOW), ...op.i32x4Lane(1), ...op.i32Add,
  ...op.get(LOW), ...op.i32x4Lane(2), ...op.i32Add,
  ...op.get(LOW), ...op.i32x4Lane(3), ...op.i32Add,
  ...op.f32FromI32,
  ...op.get(SCALES), ...times4(I8), ...op.i32Add, ...op.f32Load,
  ...op.f32Mul,
  ...op.f32Store,
  ...op.get(PX8), ...op.get(WIDTH), ...op.i32Add, ...op.set(PX8),
  ...op.get(I8), ...op.i32(1), ...op.i32Add, ...op.set(I8),
  ...op.br(0),
  ...op.end, ...op.end,
  ...op.end
]
const dots8Code = [...u32(2), ...u32(4), I32, ...u32(3), V128, ...dots8Body]

const MODULE = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  // Two function types: five and six i32 parameters, no result.
  ...section(1, [...u32(2), 0x60, ...u32(5), I32, I32, I32, I32, I32, ...u32(0), 0x60, ...u32(6), I32, I32, I32, I32, I32, I32, ...u32(0)]),
  ...section(3, [...u32(3), ...u32(0), ...u32(1), ...u32(1)]),
  // One memory, one page to start, grown by the caller.
  ...section(5, [...u32(1), 0x00, ...u32(1)]),
  ...section(7, [...u32(4), ...utf8("dots"), 0x00, ...u32(0), ...utf8("derive"), 0x00, ...u32(1), ...utf8("dots8"), 0x00, ...u32(2),
    ...utf8("memory"), 0x02, ...u32(0)]),
  ...section(10, [...u32(3), ...u32(dotsCode.length), ...dotsCode, ...u32(deriveCode.length), ...deriveCode, ...u32(dots8Code.length), ...dots8Code])
])

/** What this module uses of the WebAssembly API (the project's TypeScript libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  readonly Module: new (bytes: Uint8Array) => object
  readonly Instance: new (module: object) => { readonly exports: Readonly<Record<string, unknown>> }
}
const wasmApi = (): WasmApi | undefined => {
  const api: unknown = Reflect.get(globalThis, "WebAssembly")
  return typeof api === "object" && api !== null && "validate" in api && "Module" in api && "Instance" in api
    ? (api as WasmApi)
    : undefined
}
const isMemory = (value: unknown): value is WasmMemory =>
  typeof value === "object" && value !== null && "buffer" in value && value.buffer instanceof ArrayBuffer && "grow" in value &&
  typeof value.grow === "function"

interface Kernel {
  readonly memory: WasmMemory
  readonly dots: (query: number, base: number, count: number, dims: number, out: number) => void
  readonly derive: (tokens: number, count: number, entries: number, entrySize: number, stride: number, out: number) => void
  readonly dots8: (query: number, codes: number, count: number, width: number, scales: number, out: number) => void
}

/** Set by bin/engram.mjs when it gives V8 `--liftoff-only` (a flag V8 does not report back). */
const LIFTOFF_ONLY = Symbol.for("engram.liftoffOnly")

/**
 * The module compiled once, by V8's optimizing compiler. The node runs
 * WebAssembly on the baseline compiler only (`--liftoff-only`, for PGlite's
 * sake: bin/engram.mjs), which runs this loop five times slower (measured:
 * 7.9 against 1.5 ms for 100,000 vectors of 100 floats); the flags are lifted
 * for this one synchronous compilation and put back.
 */
let compiled: object | null | undefined
const compile = () => {
  if (compiled !== undefined) return compiled
  const wasm = wasmApi()
  try {
    if (wasm === undefined || !wasm.validate(MODULE)) return (compiled = null)
    const baselineOnly = Reflect.get(globalThis, LIFTOFF_ONLY) === true
    if (baselineOnly) setFlagsFromString("--no-liftoff-only")
    // Eagerly: a function compiled lazily, at its first call, would get the flags put back by then.
    setFlagsFromString("--no-liftoff")
    setFlagsFromString("--no-wasm-lazy-compilation")
    try {
      compiled = new wasm.Module(MODULE)
    } finally {
      setFlagsFromString("--wasm-lazy-compilation")
      setFlagsFromString("--liftoff")
      if (baselineOnly) setFlagsFromString("--liftoff-only")
    }
  } catch {
    compiled = null
  }
  return compiled
}

const instantiate = (): Kernel | undefined => {
  try {
    const module = compile()
    const wasm = wasmApi()
    if (module === null || wasm === undefined) return undefined
    const { derive, dots, dots8, memory } = new wasm.Instance(module).exports
    if (!isMemory(memory) || typeof dots !== "function" || typeof derive !== "function" || typeof dots8 !== "function") return undefined
    return {
      memory,
      dots: (q, b, c, d, o) => void Reflect.apply(dots, undefined, [q, b, c, d, o]),
      derive: (t, n, e, size, stride, o) => void Reflect.apply(derive, undefined, [t, n, e, size, stride, o]),
      dots8: (q, c, n, w, sc, o) => void Reflect.apply(dots8, undefined, [q, c, n, w, sc, o])
    }
  } catch {
    return undefined
  }
}

/** Whether this process scans with SIMD (the module validated and instantiated). */
export const simd = instantiate() !== undefined

const PAGE = 65536

/**
 * Word parts (a float64 weight and a vector of float32s, padded to four) by
 * word number, and the sum of a text's parts, in kernel memory: a woken
 * space makes every memory's vector from its words, the kernel at about a
 * sixth of the plain loop's time. Without SIMD the same sums run in JavaScript.
 */
export class PartSums {
  private readonly kernel: Kernel | undefined
  private readonly stride: number
  private readonly entrySize: number
  private capacity = 0
  private readonly known: Array<boolean> = []
  // Kernel memory: the output vector, then the word numbers of one text, then the entries.
  private tokenRoom = 4096
  private entriesAt = 0
  private plainParts: Array<{ readonly weight: number; readonly vector: Float32Array } | undefined> = []

  constructor(readonly dims: number, useSimd = true) {
    this.kernel = useSimd ? instantiate() : undefined
    this.stride = Math.ceil(dims / 4) * 4
    this.entrySize = 8 + this.stride * 4
    this.layout()
  }

  private layout() {
    this.entriesAt = Math.ceil((this.stride * 4 + this.tokenRoom * 4) / 16) * 16
  }

  private room(bytes: number) {
    const memory = this.kernel!.memory
    if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE))
  }

  /** Whether word `id`'s part was given (`set`). */
  has(id: number) {
    return this.known[id] === true
  }

  /** Word `id`'s part: the kernel reads it from now on. */
  set(id: number, weight: number, vector: Float32Array) {
    this.known[id] = true
    if (this.kernel === undefined) {
      this.plainParts[id] = { weight, vector }
      return
    }
    if (id >= this.capacity) {
      this.capacity = Math.max(id + 1, Math.ceil(this.capacity * 1.5), 1024)
      this.room(this.entriesAt + this.capacity * this.entrySize)
    }
    const at = this.entriesAt + id * this.entrySize
    const buffer = this.kernel.memory.buffer
    new Float64Array(buffer, at, 1)[0] = weight
    const entry = new Float32Array(buffer, at + 8, this.stride)
    entry.fill(0)
    entry.set(vector.subarray(0, this.dims))
  }

  /** The sum, in order, of the parts of the words `ids` (each given with `set`), not yet normalised. */
  sum(ids: ArrayLike<number>, count: number): Float32Array {
    const kernel = this.kernel
    if (kernel === undefined) {
      const vector = new Float32Array(this.dims)
      for (let t = 0; t < count; t++) {
        const part = this.plainParts[ids[t]!]!
        for (let d = 0; d < this.dims; d++) vector[d] = vector[d]! + part.weight * part.vector[d]!
      }
      return vector
    }
    if (count > this.tokenRoom) {
      // Grow the word-number room; the entries move with it.
      const old = this.capacity > 0 ? new Uint8Array(kernel.memory.buffer, this.entriesAt, this.capacity * this.entrySize).slice() : undefined
      this.tokenRoom = Math.max(count, this.tokenRoom * 2)
      this.layout()
      this.room(this.entriesAt + this.capacity * this.entrySize)
      if (old) new Uint8Array(kernel.memory.buffer, this.entriesAt, old.length).set(old)
    }
    const buffer = kernel.memory.buffer
    new Float32Array(buffer, 0, this.stride).fill(0)
    const tokens = new Int32Array(buffer, this.stride * 4, count)
    for (let t = 0; t < count; t++) tokens[t] = ids[t]!
    kernel.derive(this.stride * 4, count, this.entriesAt, this.entrySize, this.stride, 0)
    return new Float32Array(buffer, 0, this.stride).slice(0, this.dims)
  }

  /**
   * The sums of many texts at once, each as `sum` makes it: text i's word
   * numbers are `ids[offsets[i]]` up to `ids[offsets[i + 1]]` (each given with
   * `set`). Answers `stride` floats per text, not yet normalised: with the
   * kernel, a view of its memory, good until the next call.
   */
  sumMany(ids: Int32Array, offsets: Int32Array, texts: number): Float32Array {
    const total = offsets[texts]!
    const kernel = this.kernel
    if (kernel === undefined) {
      const out = new Float32Array(texts * this.stride)
      for (let i = 0; i < texts; i++) {
        out.set(this.sum(ids.subarray(offsets[i]!, offsets[i + 1]!), offsets[i + 1]! - offsets[i]!), i * this.stride)
      }
      return out
    }
    // Past the entries (every word of these texts is set already): the sums, then the word numbers.
    const outAt = Math.ceil((this.entriesAt + this.capacity * this.entrySize) / 16) * 16
    const tokensAt = outAt + texts * this.stride * 4
    this.room(tokensAt + total * 4)
    const buffer = kernel.memory.buffer
    const out = new Float32Array(buffer, outAt, texts * this.stride)
    out.fill(0)
    new Int32Array(buffer, tokensAt, total).set(ids.subarray(0, total))
    for (let i = 0; i < texts; i++) {
      const from = offsets[i]!
      kernel.derive(tokensAt + from * 4, offsets[i + 1]! - from, this.entriesAt, this.entrySize, this.stride, outAt + i * this.stride * 4)
    }
    return out
  }

  /** Floats per text in `sumMany`'s answer. */
  get width() {
    return this.stride
  }
}

/** Bytes of int8 codes a vector of `dims` dimensions takes: padded to sixteen, as the kernel reads them. */
export const codeWidth = (dims: number) => Math.ceil(dims / 16) * 16

/**
 * Writes the int8 codes of `vector` (its first `dims` numbers) to `codes`
 * from `at`: each component scaled so the largest is 127, rounded. Answers
 * the scale back (largest / 127), 0 for a zero vector.
 */
export const quantize = (vector: ArrayLike<number>, dims: number, codes: Int8Array, at: number): number => {
  let largest = 0
  for (let d = 0; d < dims; d++) {
    const value = Math.abs(vector[d]!)
    if (value > largest) largest = value
  }
  const factor = largest === 0 ? 0 : 127 / largest
  for (let d = 0; d < dims; d++) codes[at + d] = Math.round(vector[d]! * factor)
  return largest / 127
}

/**
 * Vectors as int8 codes, one scale each (its largest component / 127), in
 * their own kernel memory: the first pass of a scan reads these, a quarter of
 * the float32 vectors' bytes. Memory: the query (int16) at 0, then the codes,
 * then the scales, then the scores; growing moves the scales.
 */
class CodeStore {
  /** Bytes per vector: the dimensions padded to sixteen. */
  readonly width: number
  private capacity = 0
  private readonly codesAt: number
  private scalesAt = 0
  private scoresAt = 0

  constructor(private readonly kernel: Kernel, readonly dims: number) {
    this.width = codeWidth(dims)
    this.codesAt = this.width * 2
  }

  ensure(slots: number) {
    if (slots <= this.capacity) return
    const capacity = slots
    const memory = this.kernel.memory
    const scalesAt = this.codesAt + capacity * this.width
    const scoresAt = Math.ceil((scalesAt + capacity * 4) / 16) * 16
    const bytes = scoresAt + capacity * 4
    if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE))
    const buffer = memory.buffer
    // The scales move up past the new codes' room (copyWithin copies as if through a buffer: overlap is safe).
    new Uint8Array(buffer).copyWithin(scalesAt, this.scalesAt, this.scalesAt + this.capacity * 4)
    // The new codes' room may hold old scales and scores: left as they are, since a code's padding (past
    // `dims`) always meets the query's, which is zeros, and int8 bytes are never NaN.
    this.scalesAt = scalesAt
    this.scoresAt = scoresAt
    this.capacity = capacity
  }

  put(slot: number, vector: ArrayLike<number>) {
    const buffer = this.kernel.memory.buffer
    // Views of the whole memory, made again only when it grows (a view per vector cost a wake 0.3 s a million).
    if (this.bytes === undefined || this.bytes.buffer !== buffer) {
      this.bytes = new Int8Array(buffer)
      this.floats = new Float32Array(buffer)
    }
    this.floats![(this.scalesAt >> 2) + slot] = quantize(vector, this.dims, this.bytes, this.codesAt + slot * this.width)
  }
  private bytes: Int8Array | undefined
  private floats: Float32Array | undefined

  /** The codes (`width` bytes each) and scales of `scales.length` vectors from `from`, made elsewhere (`quantize`). */
  putMany(from: number, codes: Int8Array, scales: Float32Array) {
    const buffer = this.kernel.memory.buffer
    new Int8Array(buffer, this.codesAt + from * this.width, scales.length * this.width).set(codes.subarray(0, scales.length * this.width))
    new Float32Array(buffer, this.scalesAt + from * 4, scales.length).set(scales)
  }

  move(from: number, to: number) {
    const bytes = new Uint8Array(this.kernel.memory.buffer)
    bytes.copyWithin(this.codesAt + to * this.width, this.codesAt + from * this.width, this.codesAt + (from + 1) * this.width)
    bytes.copyWithin(this.scalesAt + to * 4, this.scalesAt + from * 4, this.scalesAt + from * 4 + 4)
  }

  /** Values proportional to the dot products of `query` with the first `count` vectors (one positive factor for all); a view until the next call. */
  ranks(query: Float32Array, count: number): Float32Array {
    const buffer = this.kernel.memory.buffer
    let largest = 0
    for (let d = 0; d < this.dims; d++) largest = Math.max(largest, Math.abs(query[d]!))
    const q = new Int16Array(buffer, 0, this.width)
    q.fill(0)
    const factor = largest === 0 ? 0 : 32767 / largest
    for (let d = 0; d < this.dims; d++) q[d] = Math.round(query[d]! * factor)
    this.kernel.dots8(0, this.codesAt, count, this.width, this.scalesAt, this.scoresAt)
    return new Float32Array(buffer, this.scoresAt, count)
  }
}

/**
 * Vectors of one length in WebAssembly memory (or a plain Float32Array
 * without SIMD), slot by slot, and the scan of all of them against a query.
 * Lengths are padded to a multiple of four with zeros. With SIMD each vector
 * is kept as int8 codes too, which the first pass of a scan reads.
 */
export class VectorStore {
  private readonly kernel: Kernel | undefined
  /** Floats per vector, padded. */
  readonly stride: number
  private capacity = 0
  private plain = new Float32Array(0)
  // In kernel memory: the query at 0, then the vectors (capacity of them), then the scores, so that growing
  // the memory leaves every vector where it is.
  private readonly vectorsAt: number
  private scoresAt = 0

  private readonly codes: CodeStore | undefined

  constructor(readonly dims: number, useSimd = true) {
    this.kernel = useSimd ? instantiate() : undefined
    const codesKernel = this.kernel === undefined ? undefined : instantiate()
    this.codes = codesKernel === undefined ? undefined : new CodeStore(codesKernel, dims)
    this.stride = Math.ceil(dims / 4) * 4
    this.vectorsAt = this.stride * 4
  }

  /** Keeps `vector` (its first `dims` numbers) at `slot`; room for it must have been made (`ensure`). */
  put(slot: number, vector: Float32Array) {
    this.data.set(vector.subarray(0, this.dims), slot * this.stride)
    this.codes?.put(slot, vector)
  }

  /**
   * Keeps `count` vectors from slot `from` at once: `vectors` holds `dims`
   * numbers each; their codes (`codeWidth` bytes each) and scales, when
   * given, were made elsewhere (a wake thread), else they are made here.
   */
  putMany(from: number, count: number, vectors: Float32Array, codes?: Int8Array, scales?: Float32Array) {
    const data = this.data
    if (this.stride === this.dims) data.set(vectors.subarray(0, count * this.dims), from * this.stride)
    else for (let k = 0; k < count; k++) data.set(vectors.subarray(k * this.dims, (k + 1) * this.dims), (from + k) * this.stride)
    if (this.codes === undefined) return
    if (codes !== undefined && scales !== undefined && scales.length === count) this.codes.putMany(from, codes, scales)
    else for (let k = 0; k < count; k++) this.codes.put(from + k, vectors.subarray(k * this.dims, (k + 1) * this.dims))
  }

  /** Copies the vector at `from` over the one at `to`. */
  move(from: number, to: number) {
    this.data.copyWithin(to * this.stride, from * this.stride, (from + 1) * this.stride)
    this.codes?.move(from, to)
  }

  /**
   * Values that order the first `count` vectors as their dot products with
   * `query` do, nearly (the int8 codes' products, or float32 ones without
   * SIMD): for choosing candidates, whose exact products callers compute.
   * A view, valid until the next call.
   */
  approximate(query: Float32Array, count: number): Float32Array {
    return this.codes === undefined ? this.dots(query, count) : this.codes.ranks(query, count)
  }

  /** The vectors, for reading and writing (a view: taken again after `ensure`). */
  get data(): Float32Array {
    if (this.kernel === undefined) return this.plain
    // One view until the memory grows or the room does (a view per call cost a third of a bulk restore's vectors).
    const buffer = this.kernel.memory.buffer
    if (this.view === undefined || this.view.buffer !== buffer || this.view.length !== this.capacity * this.stride) {
      this.view = new Float32Array(buffer, this.vectorsAt, this.capacity * this.stride)
    }
    return this.view
  }
  private view: Float32Array | undefined

  get slots() {
    return this.capacity
  }

  /** Room for `slots` vectors; the vectors kept so far stay. */
  ensure(slots: number) {
    if (slots <= this.capacity) return
    const capacity = Math.max(slots, Math.ceil(this.capacity * 1.5), 256)
    if (this.kernel === undefined) {
      const bigger = new Float32Array(capacity * this.stride)
      bigger.set(this.plain)
      this.plain = bigger
      this.capacity = capacity
      return
    }
    this.codes?.ensure(capacity)
    const memory = this.kernel.memory
    const scoresAt = this.vectorsAt + capacity * this.stride * 4
    const bytes = scoresAt + capacity * 4
    if (bytes > memory.buffer.byteLength) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / PAGE))
    // The new vectors' room held the old scores and was never written past them (memory grows zeroed):
    // zeros, as the padding must be, with the old scores cleared (clearing all of it cost a million-memory wake 0.2 s).
    new Uint8Array(memory.buffer, this.scoresAt, this.capacity * 4).fill(0)
    this.scoresAt = scoresAt
    this.capacity = capacity
  }

  /**
   * The float32 dot product of `query` with the first `count` vectors; the
   * answer is a view, valid until the next call.
   */
  dots(query: Float32Array, count: number): Float32Array {
    const kernel = this.kernel
    if (kernel === undefined) {
      const out = new Float32Array(count)
      const { plain, stride } = this
      for (let slot = 0; slot < count; slot++) {
        let dot = 0
        for (let d = 0, i = slot * stride; d < query.length; d++, i++) dot += plain[i]! * query[d]!
        out[slot] = dot
      }
      return out
    }
    const q = new Float32Array(kernel.memory.buffer, 0, this.stride)
    q.fill(0)
    q.set(query)
    kernel.dots(0, this.vectorsAt, count, this.stride, this.scoresAt)
    return new Float32Array(kernel.memory.buffer, this.scoresAt, count)
  }
}
