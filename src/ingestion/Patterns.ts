/** Regular expressions built from words a text names (names, topics, speakers). */

/** `text` with every character a regular expression reads specially escaped. */
export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** `phrase` as a whole word or phrase: no letter or digit right before or after it. */
export const wholeWord = (phrase: string, flags = "u") =>
  new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(phrase)}(?![\\p{L}\\p{N}])`, flags)

/** How many times `text` names `phrase` as a whole word or phrase. */
export const mentions = (text: string, phrase: string) => text.match(wholeWord(phrase, "gu"))?.length ?? 0
