/**
 * The four matchers entity extraction runs on a tagged text (compromise's
 * `people()`, `places()`, `organizations()` and `match("#ProperNoun+")`,
 * each read with `out("array")`), computed in one walk over its terms. Each
 * of those is a run of terms with one of a few tags, in text order, and
 * compromise builds views, caches and a match per rule to find them: about
 * a sixth of extracting a long turn. The runs are read straight off the
 * terms when the text has nothing their own rules treat specially; when it
 * has, the answer is undefined and compromise's matchers are used.
 *
 * The rules, as compromise 14 writes them:
 * - people: the text split after every term followed by a comma, then
 *   `#Honorific+? #Person+`, then split after a possessive that is not
 *   "his" or "her". Here: runs of Person terms, ended after a comma or a
 *   possessive; an honorific anywhere sends the text to compromise.
 * - places: `(#Place|#Address)+`, then split after a comma inside a run
 *   unless it is "Paris, France". Here: runs of Place or Address terms; a
 *   comma inside such a run sends the text to compromise.
 * - organizations: `#Organization+`; proper nouns: `#ProperNoun+`.
 *
 * compromise's `#Tag+` takes, from each term on, the longest run of terms
 * with the tag, then goes on after it: the text's maximal runs. A match's
 * text is its terms' `pre + text + post`, trimmed; an empty one is dropped.
 */

/** What the matchers read of a term. */
export interface TaggedTerm {
  readonly pre: string
  readonly text: string
  readonly post: string
  /** Absent on a term of a sentence left untagged. */
  readonly tags?: ReadonlySet<string> | undefined
}

export interface NameRuns {
  readonly people: ReadonlyArray<string>
  readonly places: ReadonlyArray<string>
  readonly organizations: ReadonlyArray<string>
  readonly proper: ReadonlyArray<string>
}

const has = (term: TaggedTerm, tag: string) => term.tags?.has(tag) === true
const hasComma = (term: TaggedTerm) => term.post.includes(",")
const isPlace = (term: TaggedTerm) => has(term, "Place") || has(term, "Address")

/** The text of terms `from` to `to` (exclusive) as compromise's `out("array")` writes a match. */
const textOf = (terms: ReadonlyArray<TaggedTerm>, from: number, to: number) => {
  let out = ""
  for (let i = from; i < to; i++) out += terms[i]!.pre + terms[i]!.text + terms[i]!.post
  return out.trim()
}

/**
 * The maximal runs of terms for which `member` holds, each ended early after a term for which `endsAfter` holds,
 * appended to `out` as text.
 */
const runs = (
  terms: ReadonlyArray<TaggedTerm>,
  member: (term: TaggedTerm) => boolean,
  endsAfter: (term: TaggedTerm) => boolean,
  out: Array<string>
) => {
  let i = 0
  while (i < terms.length) {
    if (!member(terms[i]!)) {
      i++
      continue
    }
    const start = i
    while (i < terms.length && member(terms[i]!)) {
      i++
      if (endsAfter(terms[i - 1]!)) break
    }
    const text = textOf(terms, start, i)
    if (text !== "") out.push(text)
  }
}

const never = () => false

/** The four matchers' answers for a tagged document (its sentences' terms); undefined when compromise must answer. */
export const nameRuns = (document: ReadonlyArray<ReadonlyArray<TaggedTerm>>): NameRuns | undefined => {
  for (const terms of document) {
    for (let i = 0; i < terms.length; i++) {
      const term = terms[i]!
      if (has(term, "Honorific")) return undefined
      // A possessive name ends its run ("Jon's"); "his" or "her" as a name would not, so compromise answers.
      if (has(term, "Person") && has(term, "Possessive") && /^(his|her)$/i.test(term.text.trim())) return undefined
      const next = terms[i + 1]
      if (next !== undefined && hasComma(term) && isPlace(term) && isPlace(next)) return undefined
    }
  }
  const people: Array<string> = []
  const places: Array<string> = []
  const organizations: Array<string> = []
  const proper: Array<string> = []
  for (const terms of document) {
    runs(terms, (term) => has(term, "Person"), (term) => hasComma(term) || has(term, "Possessive"), people)
    runs(terms, isPlace, never, places)
    runs(terms, (term) => has(term, "Organization"), never, organizations)
    runs(terms, (term) => has(term, "ProperNoun"), never, proper)
  }
  return { people, places, organizations, proper }
}
