/**
 * Attributes a newer fact can change: where someone lives, whom they work
 * for, what they work as, their relationship status. Two facts about one
 * subject giving one attribute two values are a change over time: the newer
 * value is current, the older is superseded (kept, as evidence).
 */

export interface AttributeValue {
  readonly name: "residence" | "employer" | "occupation" | "relationship"
  readonly value: string
}

const PLACE = "([A-Z][\\p{L}'’.-]*(?:\\s+[A-Z][\\p{L}'’.-]*){0,3})"

const PATTERNS: ReadonlyArray<readonly [AttributeValue["name"], RegExp]> = [
  ["residence", new RegExp(`\\b(?:lives|living|live|lived|moved|moving|relocated|relocating|settled)\\s+(?:back\\s+)?(?:in|to)\\s+${PLACE}`, "u")],
  ["employer", new RegExp(`\\b(?:works|working|work|worked|started working|got a job|took a job|joined)\\s+(?:at|for)\\s+${PLACE}`, "u")],
  ["occupation", /\b(?:works|working|work|started working) as (?:an? )?([a-z][a-z -]{2,40}?)(?=[,.;]|$| at | for | in )/u],
  ["relationship", /\b(?:is|got|are|became) (married|engaged|divorced|single|separated)\b/u]
]

/** Phrases for a note that states the current value. */
export const PHRASES: Readonly<Record<AttributeValue["name"], string>> = {
  residence: "lives in",
  employer: "works for",
  occupation: "works as",
  relationship: "is"
}

/** The attributes a fact's text states, at most one value per attribute. */
export const attributesOf = (text: string): ReadonlyArray<AttributeValue> => {
  const found: Array<AttributeValue> = []
  for (const [name, pattern] of PATTERNS) {
    const match = pattern.exec(text)
    if (match?.[1]) found.push({ name, value: match[1].trim().replace(/[.,;]+$/, "") })
  }
  return found
}

export const sameValue = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
