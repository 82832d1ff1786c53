/** Keyword analysis: lower-cased word tokens, English stopwords removed, light suffix stemming. */

const STOPWORDS = new Set(
  ("a about above after again against all am an and any are aren't as at be because been before being below between both but by " +
    "can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from further had hadn't has " +
    "hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in " +
    "into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought our ours " +
    "ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them " +
    "themselves then there there's these they they'd they'll they're they've this those through to too under until up very was " +
    "wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's with " +
    "won't would wouldn't you you'd you'll you're you've your yours yourself yourselves also just really yeah oh hey s t").split(" ")
)

const VOWEL = /[aeiouy]/

/** A small, predictable stemmer: plurals, -ing, -ed, -ly, -ies and a few derivational endings. */
export const stem = (word: string): string => {
  let w = word
  if (w.length <= 3) return w
  if (w.endsWith("'s")) w = w.slice(0, -2)
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`
  else if (w.endsWith("sses")) w = w.slice(0, -2)
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1)
  for (const suffix of ["ingly", "edly", "ing", "ed"]) {
    if (w.endsWith(suffix) && VOWEL.test(w.slice(0, -suffix.length)) && w.length - suffix.length >= 3) {
      w = w.slice(0, -suffix.length)
      if (/([^aeiouslz])\1$/.test(w)) w = w.slice(0, -1) // running -> run
      else if (/[^aeiou][aeiou][^aeiouwxy]$/.test(w) && w.length <= 4) w = `${w}e` // hoping -> hope
      break
    }
  }
  for (const [suffix, replacement] of [["ational", "ate"], ["ization", "ize"], ["fulness", "ful"], ["ousness", "ous"], ["iveness", "ive"], ["ement", ""], ["ment", ""], ["ly", ""]] as const) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 4) {
      w = w.slice(0, -suffix.length) + replacement
      break
    }
  }
  return w
}

export const words = (text: string): Array<string> => text.toLowerCase().match(/[a-z0-9]+(?:'[a-z]+)?/g) ?? []

/** Index and query terms. */
export const terms = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const word of words(text)) {
    if (STOPWORDS.has(word)) continue
    out.push(stem(word.replace(/'(s|t|re|ve|ll|d|m)$/, "")))
  }
  return out
}

export const isStopword = (word: string) => STOPWORDS.has(word)

/**
 * A memory that only asks ("Where does Marco live now?", a proxied user's
 * question): every sentence of it, after any speaker's label, is a question.
 * It states nothing: no line of a memory model's answer, and it ranks below
 * what states something ("I moved. Any tips?" does).
 */
export const onlyAsks = (content: string) =>
  content.trim() !== "" && content.replace(/^[\p{L} .'’-]{1,40}:\s+/u, "").split(/(?<=[.!?…]["'’”)\]]*)\s+/u)
    .every((sentence) => sentence.trim() === "" || /\?["'’”)\]]*$/u.test(sentence.trim()))

/** A text whose last sentence is a question, a note in brackets after it aside ("Walking or running? [shares a photo]"). */
export const endsAsking = (text: string) => /\?["'”’)]*\s*(?:\[[^\]]*\]\s*)?$/.test(text)
