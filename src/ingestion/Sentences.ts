/** Sentence boundaries: after . ! ? … before a capital or digit, at a blank line, or before a list item. */
const BOUNDARY = /(?<=[.!?…])\s+(?=["'“(]?[A-Z0-9])|\n{2,}|\n(?=\s*[-*•]\s)/

export const sentences = (text: string) => text.split(BOUNDARY).map((s) => s.trim()).filter((s) => s !== "")

export interface Spanned {
  /** The white space that separated this sentence from the one before ("" for the first). */
  readonly gap: string
  readonly sentence: string
}

/** The sentences with what separated them, so a selection of them joins back as it was written. */
export const spannedSentences = (text: string): Array<Spanned> => {
  const parts = text.trim().split(new RegExp(`(${BOUNDARY.source})`))
  const out: Array<Spanned> = []
  let gap = ""
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      gap = part
      return
    }
    const sentence = part.trim()
    if (sentence !== "") out.push({ gap: out.length === 0 ? "" : gap, sentence })
  })
  return out
}
