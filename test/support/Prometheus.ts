/**
 * A reader of the Prometheus text format (version 0.0.4) for tests: every
 * sample by its name and labels, every family's HELP and TYPE, and a check
 * that the text is well formed (each sample in a family that declared its
 * type once, before its samples).
 */
export interface Scrape {
  /** The sample `name` whose labels include `labels` (all of them, others ignored); summed when several match. */
  readonly value: (name: string, labels?: Record<string, string>) => number | undefined
  readonly types: ReadonlyMap<string, string>
  readonly samples: ReadonlyArray<{ readonly name: string; readonly labels: Record<string, string>; readonly value: number }>
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

const familyOf = (name: string, types: ReadonlyMap<string, string>) => {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined
    if (base !== undefined && types.get(base) === "histogram") return base
  }
  return name
}

export const parsePrometheus = (text: string): Scrape => {
  if (!text.endsWith("\n")) throw new Error("the text does not end with a newline")
  const types = new Map<string, string>()
  const helps = new Set<string>()
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line)
    if (meta !== null) {
      const [, kind, name, rest] = meta
      if (kind === "TYPE") {
        if (types.has(name!)) throw new Error(`TYPE of ${name} given twice`)
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest!)) throw new Error(`unknown type ${rest}`)
        types.set(name!, rest!)
      } else {
        if (helps.has(name!)) throw new Error(`HELP of ${name} given twice`)
        helps.add(name!)
      }
      continue
    }
    const sample = SAMPLE.exec(line)
    if (sample === null) throw new Error(`not a sample: ${line}`)
    const [, name, labelText, raw] = sample
    if (!types.has(familyOf(name!, types))) throw new Error(`${name} has no TYPE before it`)
    const labels: Record<string, string> = {}
    for (const [, key, value] of (labelText ?? "").matchAll(LABEL)) labels[key!] = value!.replace(/\\"/g, "\"").replace(/\\n/g, "\n").replace(/\\\\/g, "\\")
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw)
    if (raw !== "NaN" && Number.isNaN(value)) throw new Error(`not a number: ${line}`)
    samples.push({ name: name!, labels, value })
  }
  return {
    types,
    samples,
    value: (name, wanted = {}) => {
      const matching = samples.filter((s) => s.name === name && Object.entries(wanted).every(([k, v]) => s.labels[k] === v))
      return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0)
    }
  }
}
