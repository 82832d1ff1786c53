/**
 * Whole-word matching of words a text names (names, topics, speakers). The
 * per-phrase questions are answered with `indexOf` and a look at the code
 * points on either side, not with a RegExp built per phrase: extraction asks
 * them for every entity of every piece of a turn, and compiling a Unicode
 * lookbehind pattern each time was most of the extraction worker's time on
 * real turns that name many people and places.
 */

/** `text` with every character a regular expression reads specially escaped. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `phrase` as a whole word or phrase: no letter or digit right before or after it. */
export const wholeWord = (phrase: string, flags = "u") =>
  new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(phrase)}(?![\\p{L}\\p{N}])`, flags)

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u

/** Whether the code point `code` is a letter or a digit (ASCII answered without a pattern). */
const letterOrDigit = (code: number) => {
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
  return LETTER_OR_DIGIT.test(String.fromCodePoint(code))
}

/** The code point that ends just before `index` (a surrogate pair read whole), or -1 at the start. */
const codePointBefore = (text: string, index: number) => {
  if (index <= 0) return -1
  const low = text.charCodeAt(index - 1)
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2)
    if (high >= 0xd800 && high <= 0xdbff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000
  }
  return low
}

/** Whether `phrase` found at `index` of `text` stands alone: no letter or digit touches either end. */
const standsAlone = (text: string, phrase: string, index: number) => {
  const before = codePointBefore(text, index)
  if (before >= 0 && letterOrDigit(before)) return false
  const end = index + phrase.length
  return end >= text.length || !letterOrDigit(text.codePointAt(end)!)
}

/**
 * How many times `text` names `phrase` as a whole word or phrase, counted as
 * a global match of `wholeWord(phrase)` counts them (left to right, never
 * overlapping). At most `limit` are counted.
 */
export const mentions = (text: string, phrase: string, limit = Number.POSITIVE_INFINITY) => {
  if (phrase === "") return text.match(wholeWord(phrase, "gu"))?.length ?? 0
  let count = 0
  for (let at = text.indexOf(phrase); at >= 0 && count < limit;) {
    if (standsAlone(text, phrase, at)) {
      count++
      at = text.indexOf(phrase, at + phrase.length)
    } else at = text.indexOf(phrase, at + 1)
  }
  return count
}

/** Whether `text` names `phrase` as a whole word or phrase (as `wholeWord(phrase).test(text)` answers). */
export const namesWholeWord = (text: string, phrase: string) => mentions(text, phrase, 1) > 0
