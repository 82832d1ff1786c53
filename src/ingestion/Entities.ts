/** People, places, organisations and salient proper nouns, found with compromise. */
import nlp from "compromise"

export type EntityKind = "person" | "place" | "organization" | "thing"

export interface Entity {
  readonly name: string
  readonly kind: EntityKind
}

const clean = (name: string) => name.replace(/[’']s$/i, "").replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").trim()

export const extractEntities = (text: string, speaker: string | null): Array<Entity> => {
  const doc = nlp(text)
  const found = new Map<string, Entity>()
  const add = (name: string, kind: EntityKind) => {
    const cleaned = clean(name)
    if (cleaned.length < 2 || /^(I|Me|My)$/i.test(cleaned)) return
    const key = cleaned.toLowerCase()
    if (!found.has(key)) found.set(key, { name: cleaned, kind })
  }
  if (speaker) add(speaker, "person")
  for (const name of doc.people().out("array") as Array<string>) add(name, "person")
  for (const name of doc.places().out("array") as Array<string>) add(name, "place")
  for (const name of doc.organizations().out("array") as Array<string>) add(name, "organization")
  for (const name of doc.match("#ProperNoun+").out("array") as Array<string>) add(name, "thing")
  for (const acronym of text.match(/\b[A-Z]{2,}[A-Z+]*\b/g) ?? []) add(acronym, "thing")
  return [...found.values()]
}
