/**
 * A memory's source text stored as the edits that make it from the memory's
 * text. Extraction writes a memory as its source with a few words changed
 * ("I" made the speaker's name, a relative date resolved), so storing both
 * whole kept every memory's words twice: about a quarter of a space's disk.
 * The edits are found with Myers' algorithm over characters, up to a bound;
 * sources that differ more are stored whole.
 *
 * The format is a run of operations `<keep>.<delete>.<length>:<insert>`:
 * copy `keep` characters of the text, skip `delete`, add the `length`
 * characters that follow the colon; what remains of the text is copied after
 * the last operation.
 */

/** Edits beyond this many characters (inserted plus deleted): the source is stored whole. */
const MAX_EDITS = 160

type Step = "keep" | "delete" | "insert"

/** Half of a surrogate pair without the other. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The shortest edit script turning `a` into `b` (one step per character), or
 * undefined beyond `max` edits. What the two share at either end is kept
 * without a search (a shortest script keeps it too): Myers' search runs over
 * the span between the first and the last difference only, and not at all
 * when the lengths of that span differ by more than `max`.
 */
const editScript = (a: string, b: string, max: number): Array<Step> | undefined => {
  const shorter = Math.min(a.length, b.length)
  let head = 0
  while (head < shorter && a.charCodeAt(head) === b.charCodeAt(head)) head++
  let tail = 0
  while (tail < shorter - head && a.charCodeAt(a.length - 1 - tail) === b.charCodeAt(b.length - 1 - tail)) tail++
  const middleA = a.slice(head, a.length - tail)
  const middleB = b.slice(head, b.length - tail)
  if (Math.abs(middleA.length - middleB.length) > max) return undefined
  const middle = searchScript(middleA, middleB, max)
  if (middle === undefined) return undefined
  const kept = (count: number): Array<Step> => new Array<Step>(count).fill("keep")
  return [...kept(head), ...middle, ...kept(tail)]
}

/** Myers' search for the shortest edit script, or undefined beyond `max` edits. */
const searchScript = (a: string, b: string, max: number): Array<Step> | undefined => {
  const n = a.length
  const m = b.length
  const limit = Math.min(max, n + m)
  const offset = limit + 1
  const v = new Int32Array(2 * limit + 3)
  const trace: Array<Int32Array> = []
  for (let d = 0; d <= limit; d++) {
    trace.push(v.slice())
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1
      let y = x - k
      while (x < n && y < m && a.charCodeAt(x) === b.charCodeAt(y)) {
        x++
        y++
      }
      v[offset + k] = x
      if (x >= n && y >= m) return backtrack(trace, a, b, d, offset)
    }
  }
  return undefined
}

const backtrack = (trace: ReadonlyArray<Int32Array>, a: string, b: string, last: number, offset: number): Array<Step> => {
  const steps: Array<Step> = []
  let x = a.length
  let y = b.length
  for (let d = last; d > 0; d--) {
    const v = trace[d]!
    const k = x - y
    const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
    const previousK = down ? k + 1 : k - 1
    const previousX = v[offset + previousK]!
    const previousY = previousX - previousK
    while (x > previousX && y > previousY) {
      steps.push("keep")
      x--
      y--
    }
    steps.push(down ? "insert" : "delete")
    if (down) y--
    else x--
  }
  while (x > 0 && y > 0) {
    steps.push("keep")
    x--
    y--
  }
  return steps.reverse()
}

/** The edits that make `source` from `text`, or null when storing the source whole is as short. */
export const sourceDiff = (text: string, source: string): string | null => {
  if (source === text) return null
  const steps = editScript(text, source, MAX_EDITS)
  if (steps === undefined) return null
  let out = ""
  let keep = 0
  let remove = 0
  let insert = ""
  let y = 0
  const flush = () => {
    out += `${keep}.${remove}.${insert.length}:${insert}`
    keep = 0
    remove = 0
    insert = ""
  }
  for (const step of steps) {
    if (step === "keep") {
      if (remove > 0 || insert !== "") flush()
      keep++
      y++
    } else if (step === "delete") remove++
    else insert += source[y++]!
  }
  if (remove > 0 || insert !== "") flush()
  // Half of a surrogate pair inserted alone cannot be stored as UTF-8: such a source is stored whole.
  if (out.length >= source.length / 2 || LONE_SURROGATE.test(out)) return null
  return out
}

/** The source `sourceDiff` described, made again from `text`. */
export const applySourceDiff = (text: string, diff: string): string => {
  let out = ""
  let at = 0
  let i = 0
  const number = (end: string) => {
    const stop = diff.indexOf(end, i)
    if (stop < 0) throw new Error(`a source diff is cut short at ${i}`)
    const value = Number(diff.slice(i, stop))
    if (!Number.isSafeInteger(value) || value < 0) throw new Error(`a source diff has no count at ${i}`)
    i = stop + 1
    return value
  }
  while (i < diff.length) {
    const keep = number(".")
    const remove = number(".")
    const length = number(":")
    out += text.slice(at, at + keep) + diff.slice(i, i + length)
    at += keep + remove
    i += length
  }
  return out + text.slice(at)
}
