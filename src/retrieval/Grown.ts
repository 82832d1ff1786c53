/** Typed arrays that grow: at least doubled, so appending one slot at a time stays cheap. */

type Typed = Int32Array | Uint32Array | Float64Array | Uint8Array

/** `array` itself when it holds `size` entries, else a copy at least twice as long (the new entries zero). */
export const grown = <A extends Typed>(array: A, size: number, make: (n: number) => A): A => {
  if (size <= array.length) return array
  const next = make(Math.max(size, array.length * 2, 64))
  next.set(array)
  return next
}
